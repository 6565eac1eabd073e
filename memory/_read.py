"""The reading side of BlockMemory: search, list_blocks, messages, disclose, offload and load."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict

from memory._search import SearchMixin
from memory._state import NamespaceState
from memory._store import Store
from memory.disclosure import Window, WindowRef, assemble_window, elsewhere_lines
from memory.facts import FactStore
from memory.offload import OffloadStore
from memory.tokens import count_messages_tokens
from memory.types import Block, MemorySettings, UnknownDataIdError
from memory.vectors import VectorIndex

__all__ = ["ReadingMixin"]

_META_KEYS = ("block_id", "todo_id", "block_type", "keywords", "core_semantic", "create_time", "data_ids")


class ReadingMixin(SearchMixin):
    """Search and read methods; `BlockMemory` provides the attributes declared here."""

    settings: MemorySettings
    _store: Store
    _blobs: OffloadStore
    _vectors: VectorIndex
    _state: Callable[[str], NamespaceState]
    _owner: Callable[[str], tuple[str | None, str | None]]
    facts: FactStore

    def _rows(
        self, keys: list[tuple[str, str]], columns: tuple[str, ...]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        out: dict[tuple[str, str], dict[str, Any]] = {}
        by_ns: dict[str, list[str]] = {}
        for ns, bid in keys:
            by_ns.setdefault(ns, []).append(bid)
        for ns, bids in by_ns.items():
            for start in range(0, len(bids), 500):
                chunk = bids[start : start + 500]
                rows = self._store.blocks(
                    f"ns=? AND block_id IN ({','.join('?' * len(chunk))})", (ns, *chunk), columns=columns
                )
                out.update({(r["ns"], r["block_id"]): r for r in rows})
        return out

    def list_blocks(self, namespace: str, todo_id: str | None = None) -> list[dict[str, Any]]:
        """Metadata of the namespace's blocks, oldest first (DESIGN.md fields only)."""
        where, params = "ns=? AND kind='block'", [namespace]
        if todo_id is not None:
            where, params = where + " AND todo_id=?", [namespace, todo_id]
        return [
            {k: r[k] for k in _META_KEYS}
            for r in self._store.blocks(where, params, columns=_META_KEYS + ("ns", "seq"))
        ]

    def messages(self, namespace: str, limit: int | None = None) -> list[BaseMessage]:
        """Stored messages of `namespace`, oldest first (the newest `limit` when given)."""
        sql = "SELECT data FROM messages WHERE ns=? ORDER BY seq DESC"
        rows = self._store.query(
            sql + (" LIMIT ?" if limit is not None else ""),
            (namespace, *([limit] if limit is not None else [])),
        )
        return messages_from_dict([json.loads(r[0]) for r in reversed(rows)])

    def block_messages(self, namespace: str, block_id: str) -> list[BaseMessage]:
        """The messages of one block, in order."""
        rows = self._store.query(
            "SELECT data FROM messages WHERE ns=? AND block_id=? ORDER BY seq", (namespace, block_id)
        )
        return messages_from_dict([json.loads(r[0]) for r in rows])

    def disclose(
        self,
        namespace: str,
        budget_tokens: int,
        system_prompt: str = "",
        current_input: BaseMessage | None = None,
        todo_id: str | None = None,
    ) -> list[BaseMessage]:
        """The window one model call sees, within `budget_tokens` (see `memory.disclosure`).

        With `todo_id` the window is that sub-task's alone: its blocks' metadata, its newest block
        and its loose messages. The namespace's other sub-tasks are only named (their ids and
        newest gists, `elsewhere_lines`), to be searched by id with the memory tools.
        """
        return self._disclose(namespace, budget_tokens, system_prompt, current_input, todo_id)[0]["messages"]

    def _disclose(
        self,
        namespace: str,
        budget_tokens: int,
        system_prompt: str,
        current_input: BaseMessage | None,
        todo_id: str | None = None,
    ) -> tuple[Window, int]:
        state = self._state(namespace)
        with state.lock:
            blocks = self.list_blocks(namespace)
            tail = state.tail.block_id if state.tail else None
            pending = list(state.pending)
            elsewhere: list[str] = []
            if todo_id is not None:
                elsewhere = elsewhere_lines([b for b in blocks if b["todo_id"] != todo_id])
                blocks = [b for b in blocks if b["todo_id"] == todo_id]
                tail = blocks[-1]["block_id"] if blocks else None
                pending = [e for e in pending if e.todo_id == todo_id]
            latest = self.block_messages(namespace, tail) if tail else []
            loose = [e.message for e in pending]
        window = assemble_window(
            system_prompt, blocks, latest, loose, current_input, budget_tokens, self.settings,
            outline=self._outline(namespace) if todo_id is None else (),
            standing=self._standing(namespace, budget_tokens), latest_block=tail, elsewhere=elsewhere,
        )  # fmt: skip
        return window, len(blocks)

    def _standing(self, namespace: str, budget_tokens: int) -> list[str]:
        """The long-term fact lines of the namespace's user, within `facts_share` of the budget."""
        user_id, _ = self._owner(namespace)
        if user_id is None:
            return []
        return self.facts.prompt_lines(user_id, int(budget_tokens * self.settings.facts_share))

    def disclose_ref(
        self,
        namespace: str,
        budget_tokens: int,
        system_prompt: str = "",
        current_input: BaseMessage | None = None,
    ) -> WindowRef:
        """`disclose`, kept as a small reference (ids, gists and counts) for graph state.

        `window(ref, system_prompt)` rebuilds the same messages as long as the messages are stored
        in `namespace` (pass a `current_input` that was added with `add_messages`, with its id).
        """
        window, n_blocks = self._disclose(namespace, budget_tokens, system_prompt, current_input)
        current_id = str(current_input.id) if current_input is not None and current_input.id else None
        messages = window["messages"]
        return WindowRef(
            namespace=namespace,
            budget_tokens=budget_tokens,
            blocks=n_blocks,
            listed=window["listed"],
            message_ids=[str(m.id) for m in messages[1:]],
            current_id=current_id,
            tokens=count_messages_tokens(messages),
            gists=window["gists"],
        )

    def window(self, ref: WindowRef, system_prompt: str = "") -> list[BaseMessage] | None:
        """The messages of a `disclose_ref` window; None when one of them is not stored.

        `system_prompt` must be the one given to `disclose_ref`; the result stays within the
        reference's budget (block metadata or long-term facts that changed meanwhile may change
        the system text).
        """
        namespace, ids = ref["namespace"], ref["message_ids"]
        found = {str(m.id): m for m in self.messages_by_id(namespace, ids)}
        if any(i not in found for i in ids):
            return None
        current = found.get(ref["current_id"] or "")
        body = [found[i] for i in ids if i != ref["current_id"]]
        blocks = self.list_blocks(namespace)[: ref["blocks"]]
        budget = ref["budget_tokens"]
        window = assemble_window(
            system_prompt, blocks, body, [], current, budget, self.settings, ref["listed"],
            self._outline(namespace), self._standing(namespace, budget), gists=ref.get("gists", []),
        )  # fmt: skip
        return window["messages"]

    def _outline(self, namespace: str) -> list[str]:
        rows = self._store.query(
            "SELECT text FROM summaries WHERE ns=? ORDER BY first_seq DESC LIMIT ?",
            (namespace, self.settings.summary_lines),
        )
        return [r[0] for r in reversed(rows)]

    def messages_by_id(self, namespace: str, message_ids: list[str]) -> list[BaseMessage]:
        """Stored messages of `namespace` with these ids, oldest first."""
        out: list[BaseMessage] = []
        for start in range(0, len(message_ids), 500):
            chunk = message_ids[start : start + 500]
            rows = self._store.query(
                f"SELECT data FROM messages WHERE ns=? AND msg_id IN ({','.join('?' * len(chunk))}) ORDER BY seq",
                (namespace, *chunk),
            )
            out += messages_from_dict([json.loads(r[0]) for r in rows])
        return out

    def offload(self, content: str, namespace: str | None = None) -> str:
        """Store `content` outside the session; returns `store://<id>` (owned by `namespace` if given)."""
        return self._blobs.put(content, namespace)

    def load(
        self, data_id: str, offset: int = 0, limit: int | None = None, namespace: str | None = None
    ) -> str:
        """Characters `offset`..`offset+limit` of an offloaded blob.

        With `namespace`, only blobs of that namespace, of its user's same conversation, or
        unowned ones are visible; anything else is reported as unknown.
        """
        owner = self._blobs.owner(data_id)
        if namespace is not None and owner is not None and owner != namespace:
            mine, theirs = self._owner(namespace), self._owner(owner)
            if mine[0] is None or mine != theirs:
                raise UnknownDataIdError(f"{data_id} does not exist in this conversation's memory.")
        return self._blobs.get(data_id, offset, limit)

    def data_size(self, data_id: str) -> int:
        """Length in characters of an offloaded blob."""
        return self._blobs.size(data_id)

    def get_block(self, namespace: str, block_id: str) -> Block | None:
        """One block of the namespace, or None."""
        rows = self._store.blocks("ns=? AND block_id=?", (namespace, block_id))
        return self._to_block(rows[0]) if rows else None

    _to_block: Callable[[dict[str, Any]], Block]
