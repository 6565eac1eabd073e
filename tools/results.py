"""The results index: what each step produced, by reference, per user and conversation.

A step's payload (a PV case with its 25-year cash flow, a sensitivity table, a report's text) is
written once to the offload store; the index keeps its `store://` id, the kind of result, the
plan and step that made it and a few headline figures. "The latest PV case of this
conversation" is one indexed lookup instead of a scan of every chat message.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from langchain_core.tools import BaseTool, StructuredTool

from tools.sqlite_file import open_sqlite

__all__ = [
    "ConversationResults",
    "InMemoryResults",
    "Results",
    "ResultsIndex",
    "StoredResult",
    "make_results_tool",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    user_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    seq_no INTEGER NOT NULL,
    ref TEXT NOT NULL,
    headline TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS results_latest ON results(user_id, conversation_id, kind, created_at);
"""


@dataclass(frozen=True)
class StoredResult:
    """One indexed result: `ref` loads the payload; `headline` holds the figures shown without loading."""

    kind: str
    plan_id: str
    seq_no: int
    ref: str
    headline: dict[str, Any]
    created_at: float


class Results(Protocol):
    """The results of one user's conversation (what a step reads and writes)."""

    def put(
        self, kind: str, plan_id: str, seq_no: int, payload: dict[str, Any], headline: dict[str, Any]
    ) -> str:
        """Store `payload` once, index it with `headline`; return its `store://` id."""
        ...

    def latest(self, kind: str, where: Callable[[StoredResult], bool] | None = None) -> StoredResult | None:
        """The newest result of `kind` (that satisfies `where`), or None."""
        ...

    def load(self, ref: str) -> dict[str, Any]:
        """The payload stored under `ref`."""
        ...

    def recent(self, limit: int = 10) -> list[StoredResult]:
        """Up to `limit` results of any kind, newest first."""
        ...


class ResultsIndex:
    """SQLite table of results (`<data_dir>/results.sqlite`); payloads live in the offload store."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = open_sqlite(self.path, _SCHEMA)
        self._lock = threading.Lock()

    def add(self, user_id: str, conversation_id: str, result: StoredResult) -> None:
        """Index one result."""
        row = (
            user_id,
            conversation_id,
            result.kind,
            result.plan_id,
            result.seq_no,
            result.ref,
            json.dumps(result.headline, ensure_ascii=False, default=str),
            result.created_at,
        )
        with self._lock, self._db:
            self._db.execute("INSERT INTO results VALUES(?,?,?,?,?,?,?,?)", row)

    def newest(self, user_id: str, conversation_id: str, kind: str, limit: int = 20) -> list[StoredResult]:
        """Up to `limit` results of `kind`, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, plan_id, seq_no, ref, headline, created_at FROM results"
                " WHERE user_id=? AND conversation_id=? AND kind=? ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (user_id, conversation_id, kind, limit),
            ).fetchall()
        return [StoredResult(k, p, int(s), r, json.loads(h), float(t)) for k, p, s, r, h, t in rows]

    def recent(self, user_id: str, conversation_id: str, limit: int = 10) -> list[StoredResult]:
        """Up to `limit` results of any kind, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, plan_id, seq_no, ref, headline, created_at FROM results"
                " WHERE user_id=? AND conversation_id=? ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (user_id, conversation_id, limit),
            ).fetchall()
        return [StoredResult(k, p, int(s), r, json.loads(h), float(t)) for k, p, s, r, h, t in rows]

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()


class ConversationResults:
    """`Results` of one conversation: the index plus the blob store that holds the payloads."""

    def __init__(
        self,
        index: ResultsIndex,
        user_id: str,
        conversation_id: str,
        put_blob: Callable[[str], str],
        get_blob: Callable[[str], str],
    ) -> None:
        self._index = index
        self._user, self._conversation = user_id, conversation_id
        self._put_blob, self._get_blob = put_blob, get_blob

    def put(
        self, kind: str, plan_id: str, seq_no: int, payload: dict[str, Any], headline: dict[str, Any]
    ) -> str:
        """Store `payload` once, index it with `headline`; return its `store://` id."""
        ref = self._put_blob(json.dumps(payload, ensure_ascii=False, default=str))
        result = StoredResult(kind, plan_id, seq_no, ref, dict(headline), time.time())
        self._index.add(self._user, self._conversation, result)
        return ref

    def latest(self, kind: str, where: Callable[[StoredResult], bool] | None = None) -> StoredResult | None:
        """The newest result of `kind` (that satisfies `where`), or None."""
        for result in self._index.newest(self._user, self._conversation, kind):
            if where is None or where(result):
                return result
        return None

    def load(self, ref: str) -> dict[str, Any]:
        """The payload stored under `ref`."""
        return json.loads(self._get_blob(ref))

    def recent(self, limit: int = 10) -> list[StoredResult]:
        """Up to `limit` results of any kind, newest first."""
        return self._index.recent(self._user, self._conversation, limit)


class InMemoryResults:
    """A dict-backed `Results` for unit tests and throwaway runs."""

    def __init__(self) -> None:
        self._payloads: dict[str, str] = {}
        self._results: list[StoredResult] = []

    def put(
        self, kind: str, plan_id: str, seq_no: int, payload: dict[str, Any], headline: dict[str, Any]
    ) -> str:
        """Store `payload`, index it with `headline`; return its `store://` id."""
        ref = f"store://{len(self._payloads):032x}"
        self._payloads[ref] = json.dumps(payload, ensure_ascii=False, default=str)
        self._results.append(StoredResult(kind, plan_id, seq_no, ref, dict(headline), time.time()))
        return ref

    def latest(self, kind: str, where: Callable[[StoredResult], bool] | None = None) -> StoredResult | None:
        """The newest result of `kind` (that satisfies `where`), or None."""
        for result in reversed(self._results):
            if result.kind == kind and (where is None or where(result)):
                return result
        return None

    def load(self, ref: str) -> dict[str, Any]:
        """The payload stored under `ref`."""
        return json.loads(self._payloads[ref])

    def recent(self, limit: int = 10) -> list[StoredResult]:
        """Up to `limit` results of any kind, newest first."""
        return list(reversed(self._results))[:limit]


def make_results_tool(recent: Callable[[int], list[StoredResult]]) -> BaseTool:
    """`find_results` over one conversation's results index (`recent(limit)`, newest first)."""

    def find_results(kind: str | None = None, limit: int = 5) -> str:
        """List this conversation's earlier results (PV cases, sensitivity tables, answers…), newest first.

        `kind`: only this kind (e.g. pv_case, sensitivity, pv_reverse, kb_answer); empty = all kinds.
        Each line has the kind, plan and step that made it, its headline figures and its id
        (store://…): read a whole result with `load`, or pass a pv_case id to the PV tools.
        """
        found = [r for r in recent(50) if kind in (None, "", r.kind)][: max(1, min(limit, 20))]
        if not found:
            kinds = sorted({r.kind for r in recent(50)})
            have = f"已有的种类：{', '.join(kinds)}" if kinds else "本对话还没有任何结果。"
            return f"没有 {kind or ''} 类结果。{have}"
        return "\n".join(
            json.dumps(
                {"kind": r.kind, "plan": r.plan_id, "step": r.seq_no, "id": r.ref, "headline": r.headline},
                ensure_ascii=False,
                default=str,
            )
            for r in found
        )

    return StructuredTool.from_function(find_results, handle_tool_error=True)
