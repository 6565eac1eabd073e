"""The reading side of BlockMemory: search, list_blocks, messages, disclose, offload and load."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from langchain_core.messages import BaseMessage, messages_from_dict

from memory._state import NamespaceState, Unit
from memory._store import Store
from memory.disclosure import WindowRef, assemble_window
from memory.metadata import block_text
from memory.offload import OffloadStore
from memory.recall import unit_lexical
from memory.scoring import Candidate, rank, vector_weight
from memory.text import search_terms
from memory.tiers import longterm_namespace
from memory.tokens import count_messages_tokens
from memory.types import Block, BlockHit, MemorySettings, UnknownDataIdError
from memory.vectors import VectorIndex
from memory.when import time_span

__all__ = ["ReadingMixin"]

_RANK_COLUMNS = ("ns", "block_id", "seq", "kind", "tags", "last_at", "vec", "extra")
_HIT_COLUMNS = ("ns", "block_id", "seq", "kind", "todo_id", "block_type", "keywords", "core_semantic",
                "create_time", "data_ids", "message_ids", "text", "tags", "extra")  # fmt: skip
_META_KEYS = ("block_id", "todo_id", "block_type", "keywords", "core_semantic", "create_time", "data_ids")


class ReadingMixin:
    """Search and read methods; `BlockMemory` provides the attributes declared here."""

    settings: MemorySettings
    _store: Store
    _blobs: OffloadStore
    _vectors: VectorIndex
    _state: Callable[[str], NamespaceState]
    _owner: Callable[[str], tuple[str | None, str | None]]

    def search(self, namespace: str, query: str, k: int = 8, todo_id: str | None = None) -> list[BlockHit]:
        """The `k` best messages for `query` in `namespace` (and the user's long-term facts), best first.

        Each hit is one message with its block id (`metadata` has the block's metadata and all its
        message ids). With `todo_id`, only that todo's blocks of this namespace are searched.
        """
        if k <= 0 or not query.strip():
            return []
        settings = self.settings
        user_id, _ = self._owner(namespace)
        scopes = (
            [namespace]
            if user_id is None or todo_id is not None
            else [namespace, longterm_namespace(user_id)]
        )
        lowered = query.lower()
        named: set[str] = set()
        for ns in scopes:
            state = self._state(ns)
            with state.lock:
                named.update(n for n in state.speakers if n in lowered)
        stripped = lowered
        if not settings.speaker_terms:  # a speaker's name boosts their turns instead (below)
            for name in sorted(named, key=len, reverse=True):
                stripped = stripped.replace(name, " ")
        terms = search_terms(stripped)
        lexical: dict[tuple[str, Unit], float] = {}
        block_bm25: dict[tuple[str, str], float] = {}
        unit_at: dict[tuple[str, Unit], float] = {}
        units_of: dict[tuple[str, str], list[Unit]] = {}
        speaker: dict[tuple[str, Unit], str] = {}
        reference = 0.0
        for ns in scopes:
            state = self._state(ns)
            with state.lock:
                for bid, score in state.block_scores(terms, todo_id, settings.candidates).items():
                    # Okapi idf is negative for terms in most documents of a tiny corpus; a match
                    # must still count as evidence, so clamp to a small positive value.
                    block_bm25[(ns, bid)] = max(score, 1e-3)
                for unit, score in unit_lexical(state, terms, settings, todo_id, ns == namespace).items():
                    lexical[(ns, unit)] = score
                reference = max(reference, state.newest_at)
        span = time_span(query, reference)
        in_span: set[tuple[str, Unit]] = set()
        if span is not None:  # messages of the named time are candidates even without a shared word
            for ns in scopes:
                state = self._state(ns)
                with state.lock:
                    in_span.update((ns, u) for u, at in state.unit_at.items() if span[0] <= at < span[1])
        cosines: dict[tuple[str, str], float] = {}
        vec = None
        if vector_weight(query, settings) > 0:
            vec = np.asarray(self._vectors.embeddings.embed_query(query), dtype=np.float32)
            for ns, bid, cos in self._vectors.query(vec.tolist(), scopes, settings.candidates, todo_id):
                cosines[(ns, bid)] = cos
        blocks = (
            {(ns, u[0]) for ns, u in lexical}
            | {(ns, u[0]) for ns, u in in_span}
            | set(block_bm25)
            | set(cosines)
        )
        light = self._rows(list(blocks), _RANK_COLUMNS)
        for ns in scopes:
            state = self._state(ns)
            with state.lock:
                for key in blocks:
                    if key[0] == ns:
                        units = state.units_of.get(key[1], [])
                        units_of[key] = units
                        unit_at.update({(ns, u): state.unit_at.get(u, 0.0) for u in units})
                        speaker.update({(ns, u): state.unit_name[u] for u in units if u in state.unit_name})
        lex_best = max(lexical.values(), default=0.0) or 1.0
        block_best = max(block_bm25.values(), default=0.0) or 1.0
        beta = settings.block_weight
        cands: list[Candidate] = []
        for key in blocks:
            row = light.get(key)
            if row is None or row["extra"].get("source_ns") == namespace:
                continue  # vanished meanwhile, or a long-term copy of a block already here
            cos = cosines.get(key, 0.0)
            if vec is not None and row["vec"] is not None:
                bvec = np.frombuffer(row["vec"], dtype=np.float32)
                if len(bvec) == len(vec):
                    cos = float(bvec @ vec / ((np.linalg.norm(bvec) * np.linalg.norm(vec)) or 1.0))
            from_block = beta * block_bm25.get(key, 0.0) / block_best
            for unit in units_of.get(key, []):
                lex = lexical.get((key[0], unit), 0.0)
                if not lex and key not in cosines and (key[0], unit) not in in_span:
                    continue  # neither this message nor a vector-near block matched
                at = unit_at.get((key[0], unit)) or row["last_at"]
                inside = span is not None and span[0] <= at < span[1]
                cands.append(Candidate(
                    key[0], key[1], unit=unit[1], bm25=(1 - beta) * lex / lex_best + from_block,
                    cosine=cos, last_at=row["last_at"], seq=row["seq"], tags=row["tags"],
                    factor=(1.0 + settings.time_boost if inside else 1.0)
                    * (1.0 + settings.speaker_boost if speaker.get((key[0], unit)) in named else 1.0),
                ))  # fmt: skip
        ranked = [c for c in rank(cands, query, reference, settings) if c.relevance > 0]
        return self._hits(ranked[:k])

    def _hits(self, top: list[Candidate]) -> list[BlockHit]:
        rows = self._rows(list({(c.namespace, c.block_id) for c in top}), _HIT_COLUMNS)
        wanted: dict[str, set[int]] = {}
        for c in top:
            row = rows[(c.namespace, c.block_id)]
            if c.unit >= 0:
                source = row["extra"].get("source_ns") or c.namespace
                wanted.setdefault(source, set()).add(int(row["extra"]["seqs"][c.unit]))
        found = {(ns, seq): m for ns, seqs in wanted.items() for seq, m in self._by_seq(ns, sorted(seqs))}
        hits = []
        for c in top:
            row = rows[(c.namespace, c.block_id)]
            if c.unit >= 0:
                source = row["extra"].get("source_ns") or c.namespace
                msgs = [found[(source, int(row["extra"]["seqs"][c.unit]))]]
            else:
                msgs = self.block_messages(row["ns"], row["block_id"])
            tier = "long_term" if row["kind"] == "fact" else "short_term"
            metadata = {k: row[k] for k in _META_KEYS}
            metadata.update(
                namespace=row["ns"], tier=tier, tags=row["tags"], relevance=round(c.relevance, 6),
                bm25=round(c.bm25, 6), cosine=round(c.cosine, 6), source_namespace=row["extra"].get("source_ns"),
                block_message_ids=list(row["message_ids"]),
            )  # fmt: skip
            text = block_text(msgs)
            hits.append(
                BlockHit(row["block_id"], [str(m.id) for m in msgs], text, round(c.score, 9), metadata)
            )
        return hits

    def _by_seq(self, namespace: str, seqs: list[int]) -> list[tuple[int, BaseMessage]]:
        out: list[tuple[int, BaseMessage]] = []
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            rows = self._store.query(
                f"SELECT seq, data FROM messages WHERE ns=? AND seq IN ({','.join('?' * len(chunk))})",
                (namespace, *chunk),
            )
            msgs = messages_from_dict([json.loads(r[1]) for r in rows])
            out += [(int(r[0]), m) for r, m in zip(rows, msgs, strict=True)]
        return out

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
    ) -> list[BaseMessage]:
        """The window one model call sees, within `budget_tokens` (see `memory.disclosure`)."""
        return self._disclose(namespace, budget_tokens, system_prompt, current_input)[0]

    def _disclose(
        self, namespace: str, budget_tokens: int, system_prompt: str, current_input: BaseMessage | None
    ) -> tuple[list[BaseMessage], bool, int]:
        state = self._state(namespace)
        with state.lock:
            blocks = self.list_blocks(namespace)
            latest = self.block_messages(namespace, state.tail.block_id) if state.tail else []
            loose = [e.message for e in state.pending]
        window, listed = assemble_window(
            system_prompt, blocks, latest, loose, current_input, budget_tokens, self.settings,
            outline=self._outline(namespace),
        )  # fmt: skip
        return window, listed, len(blocks)

    def disclose_ref(
        self,
        namespace: str,
        budget_tokens: int,
        system_prompt: str = "",
        current_input: BaseMessage | None = None,
    ) -> WindowRef:
        """`disclose`, kept as a small reference (ids and counts) for graph state.

        `window(ref, system_prompt)` rebuilds the same messages as long as the messages are stored
        in `namespace` (pass a `current_input` that was added with `add_messages`, with its id).
        """
        window, listed, n_blocks = self._disclose(namespace, budget_tokens, system_prompt, current_input)
        current_id = str(current_input.id) if current_input is not None and current_input.id else None
        return WindowRef(
            namespace=namespace,
            budget_tokens=budget_tokens,
            blocks=n_blocks,
            listed=listed,
            message_ids=[str(m.id) for m in window[1:]],
            current_id=current_id,
            tokens=count_messages_tokens(window),
        )

    def window(self, ref: WindowRef, system_prompt: str = "") -> list[BaseMessage] | None:
        """The messages of a `disclose_ref` window; None when one of them is not stored.

        `system_prompt` must be the one given to `disclose_ref`; the result stays within the
        reference's budget (block metadata that grew meanwhile may change the system text).
        """
        namespace, ids = ref["namespace"], ref["message_ids"]
        found = {str(m.id): m for m in self.messages_by_id(namespace, ids)}
        if any(i not in found for i in ids):
            return None
        current = found.get(ref["current_id"] or "")
        body = [found[i] for i in ids if i != ref["current_id"]]
        blocks = self.list_blocks(namespace)[: ref["blocks"]]
        window, _ = assemble_window(
            system_prompt, blocks, body, [], current, ref["budget_tokens"], self.settings, ref["listed"],
            self._outline(namespace),
        )  # fmt: skip
        return window

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
