"""Per-namespace in-memory state: sequence counters, pending messages, the newest block, BM25.

Three BM25 indexes: one document per closure (a block scores as its best closure), one document
per message (a *unit*, keyed `(block_id, i)` for the i-th message of the block), so search can
return the messages that answer a question instead of whole blocks (`memory.recall`), and one per
message of the thesaurus classes of its Chinese words (`memory.concepts`).
"""

from __future__ import annotations

import json
import threading
from array import array
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from langchain_core.messages import BaseMessage, messages_from_dict

from memory._closures import ClosureVectors
from memory._store import Store
from memory.bm25 import IncrementalBM25
from memory.chat_cues import char_terms, corrects
from memory.chunker import Entry, Tail
from memory.concepts import concept_terms
from memory.text import stem_terms

__all__ = [
    "Light",
    "NamespaceState",
    "asks_question",
    "Unit",
    "block_terms",
    "decode_vec",
    "encode_vec",
    "fingerprint",
    "load_state",
    "piece_terms",
    "row_entry",
]

Unit = tuple[str, int]  # (block_id, index of the message in the block); -1 = the whole block


@dataclass(frozen=True)
class Light:
    """What ranking reads of a block, kept in memory so a search does not read ~200 rows from SQLite.

    Only a block's rewrite changes these fields, and every rewrite re-indexes it (`index`).
    """

    seq: int
    tags: list[str]
    last_at: float
    vec: bytes | None  # float32 block vector
    source_ns: str | None  # a long-term copy's own conversation


def encode_vec(vec: list[float] | None) -> bytes | None:
    """float32 bytes of a vector."""
    return None if vec is None else array("f", vec).tobytes()


def decode_vec(blob: bytes | None) -> list[float] | None:
    """Inverse of `encode_vec`."""
    if blob is None:
        return None
    out = array("f")
    out.frombytes(blob)
    return out.tolist()


def row_entry(seq: int, data: str, created_at: float, todo_id: str, tags: str) -> Entry:
    """An Entry from a `messages` row."""
    message = messages_from_dict([json.loads(data)])[0]
    return Entry(seq=seq, message=message, created_at=created_at, todo_id=todo_id, tags=json.loads(tags))


@dataclass
class NamespaceState:
    """What ingestion and search keep in memory for one namespace (rebuilt from SQLite on open)."""

    next_seq: int = 0
    next_block: int = 1
    newest_at: float = 0.0
    pending: list[Entry] = field(default_factory=list)
    tail: Tail | None = None
    tail_entries: list[Entry] = field(default_factory=list)
    tail_pieces: int = 0
    tail_vecs: list[list[float]] = field(default_factory=list)  # the tail's closure (or message) vectors
    tail_sizes: list[int] = field(default_factory=list)  # messages each of `tail_vecs` covers
    todo_of: dict[str, str] = field(default_factory=dict)
    bm25: IncrementalBM25 = field(default_factory=IncrementalBM25)
    pieces_of: dict[str, int] = field(default_factory=dict)
    units: IncrementalBM25 = field(default_factory=IncrementalBM25)
    concepts: IncrementalBM25 = field(default_factory=IncrementalBM25)  # thesaurus classes per message
    chars: IncrementalBM25 = field(default_factory=IncrementalBM25)  # characters of Chinese words
    units_of: dict[str, list[Unit]] = field(default_factory=dict)
    unit_seq: dict[Unit, int] = field(default_factory=dict)  # message seq (source namespace for facts)
    unit_at: dict[Unit, float] = field(default_factory=dict)  # created_at of the message
    seq_unit: dict[int, Unit] = field(default_factory=dict)
    unit_name: dict[Unit, str] = field(default_factory=dict)  # speaker name, lower case
    speakers: Counter[str] = field(default_factory=Counter)  # speaker name -> messages
    asking: set[int] = field(default_factory=set)  # seqs of messages that ask a question (`block_terms`)
    asked_cache: np.ndarray | None = None  # `asking` as a sorted array (`asked`), dropped when it changes
    correcting: set[int] = field(default_factory=set)  # seqs of messages that correct (`chat_cues.corrects`)
    corrected_cache: np.ndarray | None = None  # `correcting` as a sorted array (`corrections`)
    closures: ClosureVectors = field(default_factory=ClosureVectors)  # closure vectors (`memory._closures`)
    light: dict[str, Light] = field(default_factory=dict)  # what ranking reads of each block (`Light`)
    lock: threading.RLock = field(default_factory=threading.RLock)
    stem: bool = False  # messages indexed by English stems (`MemorySettings.stem_english`)
    # What the rows looked like when this state was last known current (see `fingerprint`), and
    # the store's data_version then: another process's writes change one or both.
    rows_seen: tuple = ()
    version_seen: int = -1
    vectors_seen: int = 0  # the VectorIndex generation this namespace's vectors were last sent to
    vectors_owed: bool = False  # a vector write failed after its rows committed: re-send them all

    def take(self, fresh: NamespaceState) -> None:
        """Become `fresh` (a reload), keeping this state's lock (other threads may be waiting on it)."""
        for name in self.__dataclass_fields__:
            if name not in ("lock", "vectors_seen", "vectors_owed"):
                setattr(self, name, getattr(fresh, name))

    def index(
        self,
        block_id: str,
        stored: list | dict,
        closure_vecs: bytes | list[float] | None = None,
        closure_sizes: list[int] | None = None,
        light: Light | None = None,
    ) -> None:
        """(Re)index a block: one BM25 document per closure and one per message (`block_terms`).

        A block scores as its best closure: a long block is not diluted by its other turns. Older
        stores kept no per-message terms; their blocks become one unit `(block_id, -1)`. The
        closures' vectors (one after another) and their sizes in messages go to `closures`.
        """
        self.unindex(block_id)
        self.asked_cache = self.corrected_cache = None
        if light is not None:
            self.light[block_id] = light
        if closure_sizes and isinstance(stored, dict) and sum(closure_sizes) == len(stored["messages"]):
            self.closures.add(block_id, closure_vecs, closure_sizes)
        pieces = piece_terms(stored)
        for i, terms in enumerate(pieces):
            self.bm25.add((block_id, i), terms)
        self.pieces_of[block_id] = len(pieces)
        if isinstance(stored, dict):
            units: list[Unit] = [(block_id, i) for i in range(len(stored["messages"]))]
            names = stored.get("names") or [""] * len(units)
            asks = stored.get("asks") or [False] * len(units)  # older stores did not keep it
            for unit, terms, seq, at, name, ask in zip(
                units, stored["messages"], stored["seqs"], stored["at"], names, asks, strict=True
            ):
                if ask:
                    self.asking.add(seq)
                self.units.add(unit, stem_terms(terms) if self.stem else terms, seq)
                classes = concept_terms(terms)
                if classes:  # derived from the stored terms: older stores get them too
                    self.concepts.add(unit, classes, seq)
                chars = char_terms(terms)
                if chars:
                    self.chars.add(unit, chars, seq)
                if corrects(terms):
                    self.correcting.add(seq)
                self.unit_seq[unit], self.unit_at[unit], self.seq_unit[seq] = seq, at, unit
                if name:
                    self.unit_name[unit] = name.lower()
                    self.speakers[name.lower()] += 1
        else:
            units = [(block_id, -1)]
            self.units.add(units[0], [t for p in pieces for t in p])
        self.units_of[block_id] = units

    def unindex(self, block_id: str) -> None:
        """Drop a block's closures and messages from BM25 and its closure vectors."""
        self.asked_cache = self.corrected_cache = None
        self.light.pop(block_id, None)
        self.closures.remove(block_id)
        for i in range(self.pieces_of.pop(block_id, 0)):
            self.bm25.remove((block_id, i))
        for unit in self.units_of.pop(block_id, []):
            self.units.remove(unit)
            self.concepts.remove(unit)
            self.chars.remove(unit)
            seq = self.unit_seq.pop(unit, None)
            self.unit_at.pop(unit, None)
            name = self.unit_name.pop(unit, None)
            if name is not None:
                self.speakers[name] -= 1
                if not self.speakers[name]:
                    del self.speakers[name]
            if seq is not None and self.seq_unit.get(seq) == unit:
                del self.seq_unit[seq]
                self.asking.discard(seq)
                self.correcting.discard(seq)

    def asked(self) -> np.ndarray:
        """The seqs of messages that ask a question, sorted (built once per change: 10k seqs ≈ 1 ms)."""
        if self.asked_cache is None:
            self.asked_cache = np.sort(np.fromiter(self.asking, dtype=np.int64, count=len(self.asking)))
        return self.asked_cache

    def corrections(self) -> np.ndarray:
        """The seqs of messages that correct what was said before them, sorted (cached like `asked`)."""
        if self.corrected_cache is None:
            self.corrected_cache = np.sort(
                np.fromiter(self.correcting, dtype=np.int64, count=len(self.correcting))
            )
        return self.corrected_cache

    def block_scores(self, terms: list[str], todo_id: str | None = None, limit: int = 8) -> dict[str, float]:
        """BM25 score of the `limit` best matching blocks, best first: each scores as its best closure."""
        keys = None
        if todo_id is not None:
            keys = {
                (b, i)
                for b, t in self.todo_of.items()
                if t == todo_id
                for i in range(self.pieces_of.get(b, 0))
            }
        best = self.bm25.best_by(terms, limit, lambda key: str(key[0]), keys)  # type: ignore[index]
        return {str(block_id): score for block_id, score in best.items()}


def block_terms(entries: list[Entry]) -> dict:
    """What a block row stores for search: per-message terms, seqs, times and closure sizes.

    Speaker names (`message.name`) are kept apart from the terms: a name is in half the turns of a
    two-person chat, so as a BM25 term it favours short turns; search boosts a named speaker's
    turns instead. Closure documents are the concatenation of their messages' terms. `asks`
    marks messages that ask something (the turn after one is often its answer, `memory.recall`).
    """
    from memory.chunker import closures
    from memory.metadata import search_text
    from memory.text import search_terms

    return {
        "seqs": [e.seq for e in entries],
        "at": [e.created_at for e in entries],
        "messages": [search_terms(search_text([e.message])) for e in entries],
        "names": [e.message.name or "" for e in entries],
        "asks": [asks_question(e.message) for e in entries],
        "closures": [len(p) for p in closures(entries)],
    }


def asks_question(message: BaseMessage) -> bool:
    """Whether a message's text asks something (a question mark, ASCII or full-width)."""
    content = message.content
    return isinstance(content, str) and ("?" in content or "？" in content)


def piece_terms(stored: list | dict) -> list[list[str]]:
    """Per-closure terms of a stored block (older stores kept one list per closure or per block)."""
    if isinstance(stored, dict):
        out, start = [], 0
        for size in stored["closures"]:
            out.append([t for m in stored["messages"][start : start + size] for t in m])
            start += size
        return out
    return [stored] if stored and isinstance(stored[0], str) else stored


def _entries(store: Store, where: str, params: tuple) -> list[Entry]:
    rows = store.query(
        f"SELECT seq, data, created_at, todo_id, tags FROM messages WHERE {where} ORDER BY seq", params
    )
    return [row_entry(*row) for row in rows]


def fingerprint(store: Store, namespace: str) -> tuple:
    """A cheap summary of a namespace's rows that any write to them changes."""
    messages = store.query(
        "SELECT max(seq), count(*), count(block_id) FROM messages WHERE ns=?", (namespace,)
    )[0]
    blocks = store.query(
        "SELECT count(*), max(last_at), total(length(message_ids)), total(length(core_semantic))"
        " FROM blocks WHERE ns=?",
        (namespace,),
    )[0]
    return (*messages, *blocks)


def load_state(store: Store, namespace: str, version: int, stem: bool = False) -> NamespaceState:
    """Rebuild a namespace's state from SQLite (read in one snapshot or transaction).

    `version` is `store.data_version()` read before the snapshot began: a write committed after
    it moves the version on, so the state is checked again next time instead of missed. `stem`:
    index messages by English stems (`MemorySettings.stem_english`).
    """
    state = NamespaceState(rows_seen=fingerprint(store, namespace), version_seen=version, stem=stem)
    top = store.query("SELECT max(seq), max(created_at) FROM messages WHERE ns=?", (namespace,))[0]
    state.next_seq = 0 if top[0] is None else int(top[0]) + 1
    state.newest_at = float(top[1] or 0.0)
    state.pending = _entries(store, "ns=? AND block_id IS NULL", (namespace,))
    rows = store.query(
        "SELECT block_id, todo_id, seq, terms, last_at, pvecs, json_extract(extra, '$.piece_sizes'), tags, vec,"
        " json_extract(extra, '$.source_ns') FROM blocks WHERE ns=? ORDER BY seq",
        (namespace,),
    )
    for block_id, todo_id, seq, terms, last_at, pvecs, sizes, tags, vec, source in rows:
        state.todo_of[block_id] = todo_id
        light = Light(int(seq), json.loads(tags) if tags != "[]" else [], float(last_at), vec, source)
        state.index(block_id, json.loads(terms), pvecs, json.loads(sizes) if sizes else None, light)
        state.next_block = max(state.next_block, int(seq) + 1)
        state.newest_at = max(state.newest_at, float(last_at))
    last = store.blocks("ns=? AND kind='block'", (namespace,), order="seq DESC LIMIT 1")
    if last:
        row = last[0]
        state.tail_entries = _entries(store, "ns=? AND block_id=?", (namespace, row["block_id"]))
        state.tail = Tail(
            block_id=row["block_id"],
            todo_id=row["todo_id"],
            size=len(state.tail_entries),
            last_at=row["last_at"],
            vec=decode_vec(row["vec"]),
        )
        state.tail_pieces = int(row["extra"].get("pieces", 1))
        sizes = [int(n) for n in row["extra"].get("piece_sizes", [])]
        flat = decode_vec(row.get("pvecs")) or []
        if sizes and state.tail.vec and len(flat) == len(sizes) * len(state.tail.vec):
            dim = len(state.tail.vec)
            state.tail_vecs = [flat[i * dim : (i + 1) * dim] for i in range(len(sizes))]
            state.tail_sizes = sizes
    return state
