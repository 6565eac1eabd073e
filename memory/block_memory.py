"""BlockMemory: the memory layer's facade (ingest, search, disclose, offload, tiers)."""

from __future__ import annotations

import json
import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage, ToolMessage, message_to_dict

from memory import metadata as meta
from memory._read import ReadingMixin
from memory._state import Light, NamespaceState, block_terms, decode_vec, encode_vec, fingerprint, load_state
from memory._store import Store
from memory.chunker import Entry, Tail, should_merge, split_pieces
from memory.facts import FactStore
from memory.offload import OffloadStore, preview
from memory.tiers import (
    LONGTERM_PREFIX,
    importance,
    longterm_namespace,
    strength,
    summary_cutoff,
    summary_runs,
    summary_text,
)
from memory.tokens import count_message_tokens, count_tokens
from memory.types import Block, MemorySettings, memory_namespace
from memory.vectors import VectorIndex, chroma_client

__all__ = ["BlockMemory"]

_SETTING_NAMES = {f.name for f in fields(MemorySettings)}


def _placement(message: BaseMessage, todo_id: str | None) -> tuple[float, str]:
    """When a message was said and which todo it belongs to (its own `todo_id`, else the call's, else main)."""
    kwargs = message.additional_kwargs
    return _timestamp(kwargs.get("created_at")), str(kwargs.get("todo_id") or todo_id or "main")


def _timestamp(value: Any) -> float:
    if value is None:
        return time.time()
    if isinstance(value, int | float):
        return float(value)
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _message_text(message: BaseMessage) -> str:
    """A message's text for its own vector: its words without the role label (which says nothing)."""
    return meta.search_text([message]) or meta.message_line(message)


def _normalise(vec: list[float]) -> list[float]:
    norm = sum(x * x for x in vec) ** 0.5
    return [x / norm for x in vec] if norm else vec


class BlockMemory(ReadingMixin):
    """Conversation memory in semantic blocks: bounded prompts, nothing lost, hybrid search.

    `path` is a directory holding `memory.sqlite3` and `chroma/` (a temporary one when None);
    `embeddings` defaults to the packaged offline MiniLM. Keyword settings are `MemorySettings`
    fields. `summarizer(text) -> str`, when given, writes `core_semantic` instead of extraction.
    All methods are thread-safe; different namespaces ingest in parallel.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        embeddings: Embeddings | None = None,
        *,
        chroma_url: str | None = None,
        summarizer: Callable[[str], str] | None = None,
        **settings: Any,
    ) -> None:
        unknown = set(settings) - _SETTING_NAMES
        if unknown:
            raise TypeError(f"unknown memory settings {sorted(unknown)}; valid: {sorted(_SETTING_NAMES)}")
        self.settings = MemorySettings(**settings)
        self.root = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="plangraph-memory-"))
        self.root.mkdir(parents=True, exist_ok=True)
        if embeddings is None:
            from memory.embeddings import default_embeddings

            embeddings = default_embeddings()
        self._store = Store(self.root / "memory.sqlite3")
        self._blobs = OffloadStore(self._store)
        self.facts = FactStore(self._store)
        url = chroma_url or None
        local = None if url else self.root / "chroma"
        chroma_dir = self.root / "chroma"
        self._vectors = VectorIndex(None, embeddings, local, opener=lambda: chroma_client(chroma_dir, url))
        self._summarizer = summarizer
        self._states: dict[str, NamespaceState] = {}
        self._registered: set[str] = set()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the SQLite connections (the instance is unusable afterwards)."""
        self._store.close()
        self._vectors.close()

    # -- namespaces ---------------------------------------------------------------------------
    def scope(self, agent_name: str, user_id: str, conversation_id: str) -> str:
        """Register and return the namespace `{agentName}_{userId}_{conversationId}`.

        Registration links the namespace to its user, which enables the user's long-term tier.
        """
        namespace = memory_namespace(agent_name, user_id, conversation_id)
        if namespace not in self._registered:
            self.register_namespace(namespace, user_id, conversation_id, agent_name)
        return namespace

    def register_namespace(
        self, namespace: str, user_id: str, conversation_id: str | None = None, agent_name: str | None = None
    ) -> None:
        """Record who owns `namespace` (needed for long-term memory and shared blob access)."""
        self._registered.add(namespace)
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO namespaces(ns, agent, user_id, conversation_id) VALUES(?,?,?,?)",
                (namespace, agent_name, user_id, conversation_id),
            )

    def _owner(self, namespace: str) -> tuple[str | None, str | None]:
        rows = self._store.query("SELECT user_id, conversation_id FROM namespaces WHERE ns=?", (namespace,))
        return (rows[0][0], rows[0][1]) if rows else (None, None)

    def _state(self, namespace: str) -> NamespaceState:
        with self._lock:
            state = self._states.get(namespace)
            if state is None:
                version = self._store.data_version()
                with self._store.snapshot():  # one consistent state (another thread or process may write)
                    state = self._states[namespace] = load_state(
                        self._store, namespace, version, self.settings.stem_english
                    )
                self._sync_vectors(namespace, state)
                return state
        self._catch_up(namespace, state)
        if self._vectors.check_directory() or state.vectors_seen != self._vectors.generation:
            self._sync_vectors(namespace, state)  # the Chroma directory was lost and reopened
        return state

    def _catch_up(self, namespace: str, state: NamespaceState) -> None:
        """Reload the namespace's state when another process wrote its rows since this one looked.

        Several processes may serve one data dir; without this a process would number its next
        message after a stale counter (UNIQUE constraint failed: messages.ns, messages.seq).
        """
        version = self._store.data_version()
        if version == state.version_seen:
            return
        # A snapshot, not a write transaction: checking must not wait for (or hold) the write lock.
        with state.lock, self._store.snapshot():
            if fingerprint(self._store, namespace) != state.rows_seen:
                state.take(load_state(self._store, namespace, version, self.settings.stem_english))
            state.version_seen = version

    def _sync_vectors(self, namespace: str, state: NamespaceState) -> None:
        """Re-send the namespace's vectors from SQLite when Chroma holds fewer or some were lost.

        Fewer: a new or lost Chroma store. Lost: a vector write failed after its rows committed
        (`_send_vectors`), which may have been the newer vector of a block Chroma already holds.
        """
        state.vectors_seen = self._vectors.generation
        owed, state.vectors_owed = state.vectors_owed, False
        count, sample = self._store.query(
            "SELECT count(*), max(vec) FROM blocks WHERE ns=? AND vec IS NOT NULL", (namespace,)
        )[0]
        if not count or (not owed and self._vectors.count(namespace, len(decode_vec(sample) or [])) >= count):
            return
        rows = self._store.query(
            "SELECT block_id, todo_id, vec FROM blocks WHERE ns=? AND vec IS NOT NULL", (namespace,)
        )
        items = [(b, t, decode_vec(v) or []) for b, t, v in rows]
        for start in range(0, len(items), 2000):
            self._send_vectors(namespace, state, items[start : start + 2000])  # failed: again next use

    def _send_vectors(
        self, namespace: str, state: NamespaceState, items: list[tuple[str, str, list[float]]]
    ) -> None:
        """Upsert blocks' vectors once their rows have committed (`Store.after_commit`).

        Outside the write transaction: a Chroma round trip (over HTTP with a Chroma server) no
        longer holds every other writer of the file — in this process and the others — back. SQLite
        keeps every vector; if this write fails, the error is raised to the caller as before and the
        namespace's vectors are re-sent from SQLite on its next use.
        """
        try:
            self._vectors.upsert(namespace, items)
        except Exception:
            state.vectors_seen, state.vectors_owed = -1, True
            raise

    # -- ingestion ----------------------------------------------------------------------------
    def add_messages(
        self, namespace: str, messages: Sequence[BaseMessage], todo_id: str | None = None
    ) -> list[Block]:
        """Append messages (oldest first) and chunk incrementally; returns blocks created or grown.

        Per message: `id` (assigned when missing), `additional_kwargs["created_at"]` (ISO 8601,
        default now), `["tags"]` (e.g. `["critical"]`), `["todo_id"]` (else `todo_id`, else
        "main"). Tool results over `offload_tokens` are replaced by a preview and `store://<id>`.
        """
        if namespace.startswith(LONGTERM_PREFIX):
            raise ValueError(f"namespace {namespace!r} is reserved for long-term memory; pick another name.")
        state = self._state(namespace)
        # One transaction under the database write lock: no other process appends to the file until
        # COMMIT, so the state caught up here numbers the messages and blocks after everything stored.
        # The vectors the chunking will need are computed before it, outside the lock.
        with state.lock:
            self._vectors.prepare(self._foreseen_texts(state, messages, todo_id))
        with state.lock, self._writing(namespace, state) as conn:
            entries = [self._entry(namespace, m, state, todo_id) for m in messages]
            conn.executemany(
                "INSERT INTO messages(ns, seq, msg_id, created_at, tokens, todo_id, tags, block_id, data)"
                " VALUES(?,?,?,?,?,?,?,NULL,?)",
                [
                    (
                        namespace,
                        e.seq,
                        e.message.id,
                        e.created_at,
                        count_message_tokens(e.message),
                        e.todo_id,
                        json.dumps(e.tags),
                        json.dumps(message_to_dict(e.message), ensure_ascii=False, default=str),
                    )
                    for e in entries
                ],
            )
            pieces, state.pending = split_pieces(state.pending + entries, self.settings)
            return self._chunk(namespace, state, pieces)

    def _foreseen_texts(
        self, state: NamespaceState, messages: Sequence[BaseMessage], todo_id: str | None
    ) -> list[str]:
        """The block texts `_chunk` will embed for `messages`, as far as this process can tell.

        No side effects: nothing is numbered or offloaded. A tool result that will be offloaded
        (its text changes to a preview) and a namespace another process appends to in between
        make a foreseen text differ from the real one; that text is then embedded under the lock,
        as before — the forecast only moves work, never changes what is stored.
        """
        dry = [Entry(-1, m, *_placement(m, todo_id)) for m in messages]
        pieces, _ = split_pieces(state.pending + dry, self.settings)
        return self._vector_texts(pieces)

    def _vector_texts(self, pieces: list[list[Entry]]) -> list[str]:
        """What `_chunk` embeds: one text per closure, or per message with `message_vectors`."""
        if self.settings.message_vectors:
            return [_message_text(e.message) for p in pieces for e in p]
        return [meta.block_text([e.message for e in p]) for p in pieces]

    def _piece_vectors(
        self, pieces: list[list[Entry]]
    ) -> list[tuple[list[float], list[list[float]], list[int]]]:
        """Per piece: its vector, and the vectors kept for search with the messages each covers.

        By default a piece (closure) is embedded whole and keeps that one vector. With
        `message_vectors` every message is embedded alone (about the same tokens in all) and the
        piece's vector, which merging and the block vector use, is the normalised mean of its
        messages' vectors (docs/memory.md, round 5).
        """
        flat = self._vectors.embed(self._vector_texts(pieces))
        if not self.settings.message_vectors:
            return [(v, [v], [len(p)]) for p, v in zip(pieces, flat, strict=True)]
        out, start = [], 0
        for piece in pieces:
            own = flat[start : start + len(piece)]
            start += len(piece)
            mean = np.asarray(own, dtype=np.float64).mean(axis=0)
            norm = float(np.linalg.norm(mean))
            out.append(((mean / norm if norm else mean).tolist(), own, [1] * len(own)))
        return out

    @contextmanager
    def _writing(self, namespace: str, state: NamespaceState) -> Iterator[sqlite3.Connection]:
        """A write transaction on a caught-up state; the state is reloaded later if it fails."""
        try:
            with self._store.transaction() as conn:
                self._catch_up(namespace, state)
                yield conn
                state.rows_seen = fingerprint(self._store, namespace)
        except BaseException:  # the rows roll back (the COMMIT too may fail: a full disk)
            state.rows_seen = ()  # make the next catch-up reload them
            raise

    def flush(self, namespace: str) -> list[Block]:
        """Close the pending messages into a block now (e.g. at the end of a conversation)."""
        state = self._state(namespace)
        with state.lock, self._writing(namespace, state):
            pieces, state.pending = ([state.pending] if state.pending else []), []
            return self._chunk(namespace, state, pieces)

    def _entry(
        self, namespace: str, message: BaseMessage, state: NamespaceState, todo_id: str | None
    ) -> Entry:
        kwargs = dict(message.additional_kwargs)
        update: dict[str, Any] = {}
        if not message.id:
            update["id"] = f"msg_{uuid.uuid4().hex[:16]}"
        content = message.content
        if (
            isinstance(message, ToolMessage)
            and isinstance(content, str)
            and len(content) > self.settings.offload_tokens
            and count_tokens(content) > self.settings.offload_tokens
        ):
            ref = self._blobs.put(content, namespace)
            update["content"] = preview(content, ref, self.settings.preview_tokens)
            update["additional_kwargs"] = {**kwargs, "offloaded": ref}
        if update:
            message = message.model_copy(update=update)
        seq, state.next_seq = state.next_seq, state.next_seq + 1
        created, todo = _placement(message, todo_id)
        state.newest_at = max(state.newest_at, created)
        tags = [str(t) for t in kwargs.get("tags") or []]
        return Entry(seq, message, created, todo, tags)

    def _chunk(self, namespace: str, state: NamespaceState, pieces: list[list[Entry]]) -> list[Block]:
        if not pieces:
            return []
        first_new = state.next_block
        touched: dict[str, tuple[list[Entry], list[float], int, int, list[list[float]], list[int]]] = {}
        for piece, (vec, kept, sizes) in zip(pieces, self._piece_vectors(pieces), strict=True):
            tail = state.tail
            if tail is not None and should_merge(tail, piece, vec, self.settings):
                n = state.tail_pieces
                old = tail.vec or vec
                covered = sum(state.tail_sizes) == tail.size  # else a store without closure vectors
                tail.vec = _normalise([(a * n + b) / (n + 1) for a, b in zip(old, vec, strict=True)])
                tail.size += len(piece)
                tail.last_at = piece[-1].created_at
                state.tail_entries = state.tail_entries + piece
                state.tail_pieces += 1
                if covered:
                    state.tail_vecs = [*state.tail_vecs, *kept]
                    state.tail_sizes = [*state.tail_sizes, *sizes]
            else:
                number, state.next_block = state.next_block, state.next_block + 1
                block_id = f"b_{piece[0].todo_id}_{number:03d}"
                state.tail = Tail(block_id, piece[0].todo_id, len(piece), piece[-1].created_at, vec)
                state.tail_entries, state.tail_pieces = list(piece), 1
                state.tail_vecs, state.tail_sizes = list(kept), list(sizes)
            assert state.tail is not None and state.tail.vec is not None
            number = int(state.tail.block_id.rsplit("_", 1)[1])
            touched[state.tail.block_id] = (
                state.tail_entries, state.tail.vec, state.tail_pieces, number, state.tail_vecs, state.tail_sizes
            )  # fmt: skip
        rows = [self._block_row(namespace, state, bid, *parts) for bid, parts in touched.items()]
        self._write_blocks(namespace, state, rows)
        for row in rows:
            if row["extra"]["importance"] >= 0.5:
                self._promote(namespace, row)
        every = max(self.settings.summary_every, 1)
        if state.next_block // every != first_new // every:  # every `summary_every`-th new block
            self.consolidate(namespace)
        return [self._to_block(row) for row in rows]

    def _block_row(
        self, namespace: str, state: NamespaceState, block_id: str, entries: list[Entry], vec: list[float],
        pieces: int, number: int, piece_vecs: list[list[float]], piece_sizes: list[int],
    ) -> dict[str, Any]:  # fmt: skip
        if sum(piece_sizes) != len(entries):  # a block begun before closure vectors were kept
            piece_vecs, piece_sizes = [], []
        msgs = [e.message for e in entries]
        text = meta.block_text(msgs)
        plain = meta.search_text(msgs)
        refs = meta.data_ids(msgs)
        gist = self._summarizer(text)[:50] if self._summarizer else meta.core_semantic(msgs, refs)
        return {
            "ns": namespace, "block_id": block_id, "seq": number, "kind": "block",
            "todo_id": entries[0].todo_id, "block_type": meta.block_type(msgs),
            "keywords": meta.keywords(plain, state.bm25.idf, refs), "core_semantic": gist,
            "create_time": meta.create_time(entries[0].created_at), "data_ids": refs,
            "message_ids": [str(m.id) for m in msgs], "text": text,
            "terms": block_terms(entries),
            "tags": sorted({t for e in entries for t in e.tags}), "created_at": entries[0].created_at,
            "last_at": entries[-1].created_at, "vec": vec, "pvecs": [x for v in piece_vecs for x in v],
            "extra": {"pieces": pieces, "importance": importance(entries), "seqs": [e.seq for e in entries],
                      "piece_sizes": piece_sizes},
        }  # fmt: skip

    def _write_blocks(self, namespace: str, state: NamespaceState, rows: list[dict[str, Any]]) -> None:
        with self._store.transaction() as conn:
            for row in rows:
                self._store.put_block(
                    conn, {**row, "vec": encode_vec(row["vec"]), "pvecs": encode_vec(row["pvecs"] or None)}
                )
                seqs = row["extra"]["seqs"]
                conn.execute(
                    f"UPDATE messages SET block_id=? WHERE ns=? AND seq IN ({','.join('?' * len(seqs))})",
                    (row["block_id"], namespace, *seqs),
                )
        for row in rows:
            light = Light(
                int(row["seq"]), list(row["tags"]), float(row["last_at"]), encode_vec(row["vec"]),
                row["extra"].get("source_ns"),
            )  # fmt: skip
            state.index(
                row["block_id"], row["terms"], row.get("pvecs"), row["extra"].get("piece_sizes"), light
            )
            state.todo_of[row["block_id"]] = row["todo_id"]
            state.newest_at = max(state.newest_at, row["last_at"])
        items = [(r["block_id"], r["todo_id"], r["vec"]) for r in rows]
        self._store.after_commit(lambda: self._send_vectors(namespace, state, items))

    @staticmethod
    def _to_block(row: dict[str, Any]) -> Block:
        return Block(
            namespace=row["ns"], block_id=row["block_id"], todo_id=row["todo_id"],
            block_type=row["block_type"], keywords=row["keywords"], core_semantic=row["core_semantic"],
            create_time=row["create_time"], data_ids=row["data_ids"], message_ids=row["message_ids"],
            text=row["text"], created_at=row["created_at"], last_at=row["last_at"], tags=row["tags"],
        )  # fmt: skip

    # -- short-term summaries -----------------------------------------------------------------
    def summarize(self, namespace: str, summarizer: Callable[[str], str], limit: int = 2) -> int:
        """Give up to `limit` of the newest finished blocks a `core_semantic` written by `summarizer`.

        Finished = not the block still growing. Blocks already summarised this way are skipped
        (`extra["gist_by"] == "summarizer"`); a block that is rewritten later (a merge) gets the
        extractive gist again and is summarised again. Returns how many blocks changed; an empty
        answer leaves the extractive gist. Errors from `summarizer` propagate.
        """
        state = self._state(namespace)
        with state.lock:
            tail = state.tail.block_id if state.tail else ""
        rows = self._store.blocks(
            "ns=? AND kind='block' AND block_id<>?", (namespace, tail), "seq DESC LIMIT 32",
            ("block_id", "text", "extra"),
        )  # fmt: skip
        done = 0
        for row in rows:
            if done >= limit:
                break
            if row["extra"].get("gist_by") == "summarizer":
                continue
            gist = " ".join(summarizer(row["text"]).split())[:50]
            if not gist:
                continue
            extra = {**row["extra"], "gist_by": "summarizer"}
            with state.lock, self._store.transaction() as conn:  # unless the block changed meanwhile
                done += conn.execute(
                    "UPDATE blocks SET core_semantic=?, extra=? WHERE ns=? AND block_id=? AND extra=?",
                    (gist, json.dumps(extra, ensure_ascii=False), namespace, row["block_id"],
                     json.dumps(row["extra"], ensure_ascii=False)),
                ).rowcount  # fmt: skip
        return done

    def consolidate(self, namespace: str) -> list[str]:
        """Merge runs of old, low-score consecutive blocks into summary lines; returns new ids.

        Blocks stay searchable as they are; a summary only outlines them (see `memory.tiers`). Age
        is measured back from the namespace's newest message.
        Runs automatically every `summary_every`-th new block of a namespace (8; bench/memory_tiers.py).
        """
        cutoff = summary_cutoff(self.settings)
        state = self._state(namespace)
        if cutoff is None:
            return []
        with state.lock:
            done = self._store.query("SELECT max(last_seq) FROM summaries WHERE ns=?", (namespace,))[0][0]
            tail = state.tail.block_id if state.tail else ""
            rows = self._store.blocks(
                "ns=? AND kind='block' AND seq>? AND last_at<? AND block_id!=?",
                (namespace, -1 if done is None else done, state.newest_at - cutoff, tail),
                order="seq",
                columns=("block_id", "seq", "todo_id", "tags", "extra", "core_semantic", "create_time",
                         "created_at", "last_at"),
            )  # fmt: skip
            runs = summary_runs(rows, self.settings.summary_min_blocks, self.settings.summary_max_blocks)
            ids = [f"s_{run[0]['todo_id']}_{run[0]['seq']:03d}_{run[-1]['seq']:03d}" for run in runs]
            with self._store.transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO summaries VALUES(?,?,?,?,?,?,?,?)",
                    [
                        (namespace, sid, run[0]["seq"], run[-1]["seq"], json.dumps([r["block_id"] for r in run]),
                         summary_text(run), run[0]["created_at"], run[-1]["last_at"])
                        for sid, run in zip(ids, runs, strict=True)
                    ],
                )  # fmt: skip
            return ids

    def summaries(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's summary lines, oldest first: id, member block ids and text."""
        rows = self._store.query(
            "SELECT summary_id, members, text FROM summaries WHERE ns=? ORDER BY first_seq", (namespace,)
        )
        return [{"summary_id": r[0], "blocks": json.loads(r[1]), "text": r[2]} for r in rows]

    # -- long-term tier -----------------------------------------------------------------------
    def _promote(self, namespace: str, row: dict[str, Any]) -> None:
        user_id, conversation_id = self._owner(namespace)
        if user_id is None:
            return
        lt = longterm_namespace(user_id)
        state = self._state(lt)
        with state.lock:
            fact_id = f"lt_{uuid.uuid5(uuid.NAMESPACE_URL, namespace).hex[:8]}_{row['block_id']}"
            extra = {**row["extra"], "source_ns": namespace, "conversation_id": conversation_id}
            number, state.next_block = state.next_block, state.next_block + 1
            fact = {**row, "ns": lt, "block_id": fact_id, "kind": "fact", "seq": number, "extra": extra}
            self._write_blocks(lt, state, [fact])
        self.forget(user_id)

    def forget(self, user_id: str, now: float | None = None) -> list[str]:
        """Drop the user's long-term facts whose strength fell below `longterm_min_strength`."""
        lt = longterm_namespace(user_id)
        state = self._state(lt)
        now = time.time() if now is None else now
        with state.lock:
            rows = self._store.blocks("ns=?", (lt,), columns=("block_id", "last_at", "extra"))
            stale = [
                r["block_id"]
                for r in rows
                if strength(
                    r["extra"]["importance"], now - r["last_at"], self.settings.longterm_half_life_days
                )
                < self.settings.longterm_min_strength
            ]
            if stale:
                with self._store.transaction() as conn:
                    conn.executemany("DELETE FROM blocks WHERE ns=? AND block_id=?", [(lt, b) for b in stale])
                for b in stale:
                    state.unindex(b)
                    state.todo_of.pop(b, None)
                self._store.after_commit(lambda: self._vectors.delete(lt, stale))
        return stale

    def long_term(self, user_id: str) -> list[dict[str, Any]]:
        """The user's long-term facts: metadata plus source conversation and importance."""
        rows = self._store.blocks("ns=?", (longterm_namespace(user_id),))
        return [
            {**self._to_block(r).metadata(), "text": r["text"], "tags": r["tags"], **{
                k: r["extra"].get(k) for k in ("source_ns", "conversation_id", "importance")}}
            for r in rows
        ]  # fmt: skip
