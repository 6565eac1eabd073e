"""Long-term facts (seed 004's long-term tier): what a user said should hold across conversations.

A fact is one keyed statement of a user — a standing value ("电价 0.72 元/kWh"), a preference ("报告
用英文"), or a note the model judged worth keeping — with where it came from (conversation,
message, time, who judged it). One row per (user, key) in the memory's SQLite file: stating the
same key again replaces the value, `forget` deletes it. The memory layer stores and packs facts;
what counts as a fact and what a key means is decided above it (nodes/standing.py).

`prompt_lines(user, max_tokens)` packs the user's facts, newest first, into at most `max_tokens`
tokens: what `BlockMemory.disclose` puts into the one system message of every model call.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from memory._store import Store
from memory.tokens import count_tokens

__all__ = ["FACTS_HEADER", "Fact", "FactStore", "pack_lines"]

FACTS_HEADER = "该用户的长期偏好与事实（跨会话记住；本次请求自己给出的值优先）："


@dataclass(frozen=True)
class Fact:
    """One long-term fact of a user.

    `key` says what it is about (a field name, `lang`, or `note:…`); `value` is its JSON value;
    `text` is the line shown to a model and to the user; `said` the user's words it came from;
    `scope` the agents it applies to (empty: all); `judged_by` is `rule` or `model`.
    """

    fact_id: str
    user_id: str
    key: str
    value: Any
    text: str
    said: str
    scope: tuple[str, ...] = ()
    conversation_id: str = ""
    message_id: str = ""
    judged_by: str = "rule"
    importance: float = 1.0
    created_at: float = field(default_factory=time.time)

    @property
    def when(self) -> str:
        """`created_at` as `YYYY-MM-DD HH:MM` (UTC)."""
        return datetime.fromtimestamp(self.created_at, UTC).strftime("%Y-%m-%d %H:%M")

    def as_dict(self) -> dict[str, Any]:
        """The fact as JSON-ready fields (plus `when`)."""
        return {**asdict(self), "scope": list(self.scope), "when": self.when}


def pack_lines(lines: Sequence[str], max_tokens: int) -> list[str]:
    """The leading `lines` whose tokens (one newline each) fit into `max_tokens`."""
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = count_tokens(line) + 1
        if used + cost > max_tokens:
            break
        kept.append(line)
        used += cost
    return kept


class FactStore:
    """The `facts` table of a memory store (shared connection, same transactions)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def put(
        self,
        user_id: str,
        key: str,
        value: Any,
        text: str,
        said: str,
        *,
        scope: Sequence[str] = (),
        conversation_id: str = "",
        message_id: str = "",
        judged_by: str = "rule",
        importance: float = 1.0,
        now: float | None = None,
    ) -> Fact:
        """Store (or replace) the user's fact under `key`; the replaced one gets a new id."""
        fact = Fact(
            fact_id=f"f_{uuid.uuid4().hex[:10]}",
            user_id=user_id,
            key=key,
            value=value,
            text=text,
            said=said,
            scope=tuple(scope),
            conversation_id=conversation_id,
            message_id=message_id,
            judged_by=judged_by,
            importance=importance,
            created_at=time.time() if now is None else now,
        )
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO facts(user_id, key, fact_id, value, text, said, scope, conversation_id,"
                " message_id, judged_by, importance, created_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    user_id, key, fact.fact_id, json.dumps(value, ensure_ascii=False), text, said,
                    json.dumps(list(scope)), conversation_id, message_id, judged_by, importance,
                    fact.created_at,
                ),
            )  # fmt: skip
        return fact

    def for_user(self, user_id: str) -> list[Fact]:
        """The user's facts, newest first."""
        rows = self._store.query(
            "SELECT fact_id, user_id, key, value, text, said, scope, conversation_id, message_id, judged_by,"
            " importance, created_at FROM facts WHERE user_id=? ORDER BY created_at DESC, key",
            (user_id,),
        )
        return [
            Fact(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], tuple(json.loads(r[6])), *r[7:])
            for r in rows
        ]

    def get(self, user_id: str, key: str) -> Fact | None:
        """The user's fact under `key`, or None."""
        return next((f for f in self.for_user(user_id) if f.key == key), None)

    def forget(self, user_id: str, fact: str) -> Fact | None:
        """Delete the user's fact with this id (or key); the deleted fact, or None when there was none."""
        found = next((f for f in self.for_user(user_id) if fact in (f.fact_id, f.key)), None)
        if found is not None:
            with self._store.transaction() as conn:
                conn.execute("DELETE FROM facts WHERE user_id=? AND key=?", (user_id, found.key))
        return found

    def prompt_lines(self, user_id: str, max_tokens: int, agent: str | None = None) -> list[str]:
        """The header and the user's facts (newest first, those scoped to `agent` or to all) within `max_tokens`."""
        facts = [f for f in self.for_user(user_id) if not f.scope or agent is None or agent in f.scope]
        if not facts or max_tokens <= count_tokens(FACTS_HEADER) + 1:
            return []
        lines = pack_lines([f"- {f.text}" for f in facts], max_tokens - count_tokens(FACTS_HEADER) - 1)
        return [FACTS_HEADER, *lines] if lines else []
