"""`search`: the k best messages for a query, each with its block for context.

Candidates are messages (units): the best by windowed BM25 (`memory.recall`), every message of
the blocks nearest by vector, and the messages inside a time span the question names
(`memory.when`). Each is scored by `memory.scoring.rank` with

    bm25   = (1 − block_weight)·windowed BM25 / best + block_weight·its block's best closure / best
    cosine = (1 − piece_weight)·its block's cosine + piece_weight·its closure's (`memory._closures`)
    factor = (1 + time_boost if inside the named span) × (1 + speaker_boost if its speaker is named)

The windowed BM25 also gets a second hop (`expansion_weight`): the words of the best messages'
neighbourhood that are rare in the conversation, searched again (`memory.recall.expansion_terms`).

The query embedding and the vector query run in a second thread while BM25 scores, so a search
costs about max(embedding, lexical work) plus ranking.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

import numpy as np
from langchain_core.messages import BaseMessage, messages_from_dict

from memory._state import NamespaceState, Unit
from memory._store import Store
from memory.chat_cues import query_chars
from memory.concepts import query_concepts
from memory.metadata import block_text
from memory.recall import expansion_terms, unit_lexical
from memory.scoring import Candidate, rank, vector_weight
from memory.spread import asks_for_set, spread
from memory.text import QUESTION_WORDS, ZH_STOP, search_terms, stem_terms
from memory.tiers import longterm_namespace
from memory.types import BlockHit, MemorySettings
from memory.vectors import VectorIndex
from memory.when import time_span

__all__ = ["SearchMixin"]

_HIT_COLUMNS = ("ns", "block_id", "seq", "kind", "todo_id", "block_type", "keywords", "core_semantic",
                "create_time", "data_ids", "message_ids", "tags", "extra")  # fmt: skip
_META_KEYS = ("block_id", "todo_id", "block_type", "keywords", "core_semantic", "create_time", "data_ids")
Key = tuple[str, str]  # (namespace, block_id)
_NOT_TOPIC = QUESTION_WORDS | ZH_STOP  # words whose thesaurus classes say nothing of a question's topic


class _Vectors(threading.Thread):
    """Embed the query and ask the vector index, beside the lexical work."""

    def __init__(self, vectors: VectorIndex, query: str, scopes: list[str], n: int, todo_id: str | None):
        super().__init__(daemon=True)
        self.args_ = (vectors, query, scopes, n, todo_id)
        self.vec: np.ndarray | None = None
        self.cosines: dict[Key, float] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        vectors, query, scopes, n, todo_id = self.args_
        try:
            self.vec = np.asarray(vectors.query_vector(query), dtype=np.float32)
            for ns, bid, cos in vectors.query(self.vec.tolist(), scopes, n, todo_id):
                self.cosines[(ns, bid)] = cos
        except BaseException as err:  # re-raised in the caller's thread by `result`
            self.error = err

    def result(self) -> tuple[np.ndarray | None, dict[Key, float]]:
        self.join()
        if self.error is not None:
            raise self.error
        return self.vec, self.cosines


@lru_cache(maxsize=1024)
def _name_pattern(name: str) -> re.Pattern[str]:
    """A speaker's name as said in a query, with its possessive 's.

    A Latin-script name counts only as a whole word: a tool or agent named "pv" is not named by
    "pvsyst" or "pv_calc". A CJK name has no word boundaries to check and matches where it occurs.
    """
    word = re.escape(name)
    if name.isascii():
        word = rf"(?<![A-Za-z0-9_]){word}(?![A-Za-z0-9_])"
    return re.compile(word + r"(?:['’]s\b)?", re.IGNORECASE)


def names_in(query: str, speakers: Iterable[str]) -> set[str]:
    """The speaker names (lower case) that `query` mentions (`_name_pattern`)."""
    return {name for name in speakers if name and _name_pattern(name).search(query)}


def strip_names(query: str, names: set[str]) -> str:
    """`query` without the names (and their possessive 's), longest first; whitespace collapsed."""
    out = query
    for name in sorted(names, key=len, reverse=True):
        out = _name_pattern(name).sub(" ", out)
    return " ".join(out.split())


def without_names(query: str, names: set[str]) -> str:
    """The query as embedded: without the speaker names it mentions (and their possessive 's).

    A name is in every greeting and every turn that addresses its owner ("Hey Maya, how are
    you?"), so a query vector that keeps it is nearest to those; the named speaker's turns are
    boosted by `speaker_boost` instead. A query that is only a name is embedded whole.
    """
    out = strip_names(query, names)
    return out if out.strip(" ?？!！.,，。") else query


def _cos(blobs: list[bytes], vec: np.ndarray) -> list[float]:
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(-1, len(vec))
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(vec) or 1.0)
    values: list[float] = ((matrix @ vec) / np.where(norms > 0, norms, 1.0)).tolist()
    return values


def _cosines(light: dict[Key, dict[str, Any]], vec: np.ndarray | None) -> dict[Key, float]:
    """Cosine of every block vector with the query's, in one matrix product."""
    if vec is None:
        return {}
    keys = [k for k, r in light.items() if r["vec"] is not None and len(r["vec"]) == 4 * len(vec)]
    return dict(zip(keys, _cos([light[k]["vec"] for k in keys], vec), strict=True)) if keys else {}


def _content_prior(state: NamespaceState, unit: Unit, c: float) -> float:
    """The prior n / (n + c) of a message of n content terms ("No way." shares its closure's vector)."""
    with state.lock:
        n = sum(state.units.terms_of(unit).values())
    return n / (n + c)


class SearchMixin:
    """The search method of `BlockMemory`."""

    settings: MemorySettings
    _store: Store
    _vectors: VectorIndex
    _state: Callable[[str], NamespaceState]
    _owner: Callable[[str], tuple[str | None, str | None]]
    _rows: Callable[[list[Key], tuple[str, ...]], dict[Key, dict[str, Any]]]
    block_messages: Callable[[str, str], list[BaseMessage]]

    def search(self, namespace: str, query: str, k: int = 8, todo_id: str | None = None) -> list[BlockHit]:
        """The `k` best messages for `query` in `namespace` (and the user's long-term facts), best first.

        Each hit is one message with its block id (`metadata` has the block's metadata and all its
        message ids). `k` is honoured; the cap of what a prompt shows is `settings.top_k`, applied
        by the `search_block` tool. With `todo_id`, only that todo's blocks of this namespace count.
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
        states = {ns: self._state(ns) for ns in scopes}
        lowered = query.lower()
        named: set[str] = set()
        for state in states.values():
            with state.lock:
                speakers = list(state.speakers)
            named |= names_in(lowered, speakers)
        vectors = None
        if vector_weight(query, settings) > 0:
            stored = []  # scopes with blocks: asking the vector store about another would create it
            for ns, state in states.items():
                with state.lock:
                    if state.units_of:
                        stored.append(ns)
            embedded = query if settings.speaker_vector else without_names(query, named)
            vectors = _Vectors(self._vectors, embedded, stored, settings.candidates, todo_id)
            vectors.start()
        # a speaker's name boosts their turns instead (factor); as a word it would rank greetings
        terms = search_terms(lowered if settings.speaker_terms else strip_names(lowered, named))
        unit_terms = stem_terms(terms) if settings.stem_english else terms  # as messages are indexed
        concepts = (
            query_concepts(terms, _NOT_TOPIC, settings.answer_classes, settings.category_classes)
            if settings.concept_weight > 0
            else {}
        )
        chars = query_chars(terms, _NOT_TOPIC) if settings.char_weight > 0 else None
        weights = (
            {t: settings.question_weight for t in unit_terms if t in QUESTION_WORDS}
            if settings.question_weight != 1.0
            else None
        )
        lexical: dict[tuple[str, Unit], float] = {}
        block_bm25: dict[Key, float] = {}
        reference = 0.0
        for ns, state in states.items():
            with state.lock:
                for bid, score in state.block_scores(terms, todo_id, settings.candidates).items():
                    block_bm25[(ns, bid)] = max(score, 1e-3)  # Okapi idf can be ≤ 0 in a tiny corpus
                found = unit_lexical(
                    state,
                    unit_terms,
                    settings,
                    todo_id,
                    ns == namespace,
                    2 * k,
                    concepts,
                    weights or None,
                    chars,
                )
                if settings.expansion_weight > 0 and found:
                    extra = expansion_terms(state, found, unit_terms, settings)
                    more = unit_lexical(state, extra, settings, todo_id, ns == namespace)
                    best, best_more = max(found.values()), max(more.values(), default=0.0) or 1.0
                    for unit, score in more.items():  # scaled so expansion adds at most its weight
                        found[unit] = (
                            found.get(unit, 0.0) + settings.expansion_weight * best * score / best_more
                        )
                for unit, score in found.items():
                    lexical[(ns, unit)] = score
                reference = max(reference, state.newest_at)
        span = time_span(query, reference)
        in_span: set[tuple[str, Unit]] = set()
        if span is not None:  # messages of the named time are candidates even without a shared word
            for ns, state in states.items():
                with state.lock:
                    in_span.update((ns, u) for u, at in state.unit_at.items() if span[0] <= at < span[1])
        vec, cosines = vectors.result() if vectors is not None else (None, {})
        blocks = {(ns, u[0]) for ns, u in lexical} | {(ns, u[0]) for ns, u in in_span}
        blocks |= set(cosines)
        for key in block_bm25:  # otherwise a block only in block_bm25 has no candidate message
            state = states[key[0]]
            with state.lock:
                if state.units_of.get(key[1]) == [(key[1], -1)]:  # stored before per-message terms
                    blocks.add(key)
        light = self._light_rows(blocks, states)
        lex_best = max(lexical.values(), default=0.0) or 1.0
        block_best = max(block_bm25.values(), default=0.0) or 1.0
        beta = settings.block_weight
        cands: list[Candidate] = []
        cosine_of = self._unit_cosines(states, light, vec, cosines)
        for key, row in light.items():
            if row["source_ns"] == namespace:
                continue  # a long-term copy of a block already here
            from_block = beta * block_bm25.get(key, 0.0) / block_best
            state = states[key[0]]
            with state.lock:
                units = [
                    (u, state.unit_at.get(u), state.unit_name.get(u, ""))
                    for u in state.units_of.get(key[1], [])
                ]
            for unit, at, who in units:
                lex = lexical.get((key[0], unit), 0.0)
                legacy = unit[1] < 0 and key in block_bm25  # a block stored before per-message terms
                if not lex and not legacy and key not in cosines and (key[0], unit) not in in_span:
                    continue  # neither this message nor a vector-near block matched
                when = at or row["last_at"]
                inside = span is not None and span[0] <= when < span[1]
                factor = (1.0 + settings.time_boost if inside else 1.0) * (
                    1.0 + settings.speaker_boost if who in named else 1.0
                )
                cands.append(Candidate(
                    key[0], key[1], unit=unit[1], bm25=(1 - beta) * lex / lex_best + from_block,
                    cosine=cosine_of(key, unit), last_at=row["last_at"], seq=row["seq"], tags=row["tags"],
                    factor=factor,
                ))  # fmt: skip
        ranked = [c for c in rank(cands, query, reference, settings) if c.relevance > 0]
        if settings.set_spread < 1.0 and asks_for_set(query):  # many events, not one event's turns
            return self._hits(spread(ranked, settings.set_spread, k))
        return self._hits(ranked[:k])

    def _unit_cosines(
        self,
        states: dict[str, NamespaceState],
        light: dict[Key, dict[str, Any]],
        vec: np.ndarray | None,
        cosines: dict[Key, float],
    ) -> Callable[[Key, Unit], float]:
        """Each message's cosine with `vec`: (1 − piece_weight)·its block's + piece_weight·its closure's."""
        settings = self.settings
        exact = _cosines(light, vec)
        alpha = settings.piece_weight
        per_message: dict[Key, list[float]] = {}  # each message's closure (or own) cosine
        if vec is not None and alpha > 0:
            for ns, state in states.items():
                with state.lock:
                    found_cos = state.closures.per_message([b for n, b in light if n == ns], vec)
                per_message.update(((ns, b), v) for b, v in found_cos.items())

        def cosine_of(key: Key, unit: Unit) -> float:
            cos = exact.get(key, cosines.get(key, 0.0))
            pieces = per_message.get(key)
            if pieces is not None and 0 <= unit[1] < len(pieces):
                cos = (1 - alpha) * cos + alpha * pieces[unit[1]]
            if settings.short_prior > 0:  # "No way." shares its closure's vector but answers nothing
                cos *= _content_prior(states[key[0]], unit, settings.short_prior)
            return cos

        return cosine_of

    def _light_rows(self, keys: set[Key], states: dict[str, NamespaceState]) -> dict[Key, dict[str, Any]]:
        """What ranking needs of each block (the vector, recency, tags, a fact's source).

        Read from the namespaces' in-memory state (`memory._state.Light`); SQLite only for a block
        the state does not hold.
        """
        out: dict[Key, dict[str, Any]] = {}
        by_ns: dict[str, list[str]] = {}
        for ns, bid in keys:
            state = states[ns]
            with state.lock:
                held = state.light.get(bid)
            if held is None:
                by_ns.setdefault(ns, []).append(bid)
            else:
                out[(ns, bid)] = {"seq": held.seq, "tags": held.tags, "last_at": held.last_at,
                                  "vec": held.vec, "source_ns": held.source_ns}  # fmt: skip
        for ns, bids in by_ns.items():
            for start in range(0, len(bids), 500):
                chunk = bids[start : start + 500]
                rows = self._store.query(
                    "SELECT block_id, seq, tags, last_at, vec, json_extract(extra, '$.source_ns') FROM blocks"
                    f" WHERE ns=? AND block_id IN ({','.join('?' * len(chunk))})",
                    (ns, *chunk),
                )
                for bid, seq, tags, last_at, vec, source in rows:
                    out[(ns, bid)] = {"seq": seq, "tags": json.loads(tags) if tags != "[]" else [],
                                      "last_at": last_at, "vec": vec, "source_ns": source}  # fmt: skip
        return out

    def _hits(self, top: list[Candidate]) -> list[BlockHit]:
        rows = self._rows(list({(c.namespace, c.block_id) for c in top}), _HIT_COLUMNS)

        def where(c: Candidate) -> tuple[str, int]:
            row = rows[(c.namespace, c.block_id)]
            return row["extra"].get("source_ns") or c.namespace, int(row["extra"]["seqs"][c.unit])

        wanted: dict[str, list[int]] = {}
        for c in top:
            if c.unit >= 0:
                ns, seq = where(c)
                wanted.setdefault(ns, []).append(seq)
        found = {(ns, seq): m for ns, seqs in wanted.items() for seq, m in self._by_seq(ns, seqs)}
        hits = []
        for c in top:
            row = rows[(c.namespace, c.block_id)]
            msgs = [found[where(c)]] if c.unit >= 0 else self.block_messages(row["ns"], row["block_id"])
            metadata = {k: row[k] for k in _META_KEYS}
            metadata.update(
                namespace=row["ns"], tier="long_term" if row["kind"] == "fact" else "short_term",
                tags=row["tags"], relevance=round(c.relevance, 6), bm25=round(c.bm25, 6),
                cosine=round(c.cosine, 6), source_namespace=row["extra"].get("source_ns"),
                block_message_ids=list(row["message_ids"]),
            )  # fmt: skip
            ids = [str(m.id) for m in msgs]
            hits.append(BlockHit(row["block_id"], ids, block_text(msgs), round(c.score, 9), metadata))
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
