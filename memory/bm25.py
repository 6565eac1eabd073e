"""An incremental inverted-index BM25 whose scores equal `rank_bm25.BM25Okapi` on the same corpus.

rank_bm25 rescans every document per query and cannot add one; this index keeps postings, document
lengths and a histogram of document frequencies, so adding or removing a document is
O(its terms) and the average idf (needed for Okapi's negative-idf floor) is O(distinct df values).
Scoring is vectorised: each document has a slot, a term's posting is cached as numpy arrays of
slots and term frequencies (rebuilt only after that term's posting changed), and a query adds
each term's contribution into one dense array (bench/memory_latency.py: see docs/memory.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence

import numpy as np

__all__ = ["IncrementalBM25"]

_Scored = tuple[np.ndarray, np.ndarray]  # (slots, scores) of the matching documents


class IncrementalBM25:
    """Okapi BM25 over a growing set of documents keyed by any hashable id.

    `k1`, `b` and `epsilon` default to rank_bm25's (`smooth_idf=True`: Lucene's non-negative idf,
    for small corpora such as routing texts); `scores(query)` returns every document that
    contains a query term, with the score `BM25Okapi.get_scores` gives it (possibly 0.0: Okapi's
    idf is exactly 0 for a term in half the documents, and a match must still be a candidate).
    """

    def __init__(
        self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25, smooth_idf: bool = False
    ) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.smooth_idf = smooth_idf
        self._postings: dict[str, dict[int, int]] = {}  # term -> {slot: tf}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # term -> (slots, tfs) cache
        self._slot: dict[Hashable, int] = {}
        self._keys: list[Hashable | None] = []  # slot -> key (None once removed; slots are not reused)
        self._lens = np.zeros(64)
        self._pos = np.full(64, -1, dtype=np.int64)  # slot -> caller's position (e.g. message seq)
        self._doc_terms: dict[Hashable, Counter[str]] = {}
        self._total_len = 0
        self._df_hist: Counter[int] = Counter()

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: object) -> bool:
        return key in self._slot

    def add(self, key: Hashable, tokens: Sequence[str], position: int = -1) -> None:
        """Index a document (replacing any document with the same key).

        `position` (≥ 0) places the document on a line, for `by_position` (neighbour windows).
        """
        if key in self._slot:
            self.remove(key)
        slot = len(self._keys)
        if slot >= len(self._lens):
            self._lens = np.concatenate([self._lens, np.zeros(len(self._lens))])
            self._pos = np.concatenate([self._pos, np.full(len(self._pos), -1, dtype=np.int64)])
        self._keys.append(key)
        self._slot[key] = slot
        self._lens[slot] = len(tokens)
        self._pos[slot] = position
        counts = Counter(tokens)
        self._doc_terms[key] = counts
        self._total_len += len(tokens)
        for term, tf in counts.items():
            posting = self._postings.setdefault(term, {})
            self._move_df(len(posting), len(posting) + 1)
            posting[slot] = tf
            self._arrays.pop(term, None)

    def remove(self, key: Hashable) -> None:
        """Drop a document; unknown keys are ignored."""
        counts = self._doc_terms.pop(key, None)
        if counts is None:
            return
        slot = self._slot.pop(key)
        self._keys[slot] = None
        self._total_len -= int(self._lens[slot])
        for term in counts:
            posting = self._postings[term]
            self._move_df(len(posting), len(posting) - 1)
            del posting[slot]
            self._arrays.pop(term, None)
            if not posting:
                del self._postings[term]
        if len(self._keys) - len(self._slot) > max(1024, len(self._slot)):
            self._compact()  # a growing block is re-indexed per message: drop the dead slots

    def _compact(self) -> None:
        """Renumber the live documents' slots densely (same order), so arrays stay proportional to them."""
        live = [(slot, key) for slot, key in enumerate(self._keys) if key is not None]
        new_slot = {old: new for new, (old, _) in enumerate(live)}
        self._keys = [key for _, key in live]
        self._slot = {key: new for new, (_, key) in enumerate(live)}
        lens = np.zeros(max(64, 2 * len(live)))
        lens[: len(live)] = self._lens[[old for old, _ in live]]
        self._lens = lens
        pos = np.full(len(lens), -1, dtype=np.int64)
        pos[: len(live)] = self._pos[[old for old, _ in live]]
        self._pos = pos
        self._postings = {
            term: {new_slot[old]: tf for old, tf in posting.items()}
            for term, posting in self._postings.items()
        }
        self._arrays.clear()

    def _move_df(self, old: int, new: int) -> None:
        if old:
            self._df_hist[old] -= 1
            if not self._df_hist[old]:
                del self._df_hist[old]
        if new:
            self._df_hist[new] += 1

    def _raw_idf(self, df: int) -> float:
        n = len(self._slot)
        if self.smooth_idf:  # Lucene's idf: never negative, so a handful of documents rank sensibly
            return math.log1p((n - df + 0.5) / (df + 0.5))
        return math.log(n - df + 0.5) - math.log(df + 0.5)

    def _average_idf(self) -> float:
        vocab = sum(self._df_hist.values())
        if not vocab:
            return 0.0
        return sum(count * self._raw_idf(df) for df, count in self._df_hist.items()) / vocab

    def df(self, term: str) -> int:
        """How many documents contain `term`."""
        return len(self._postings.get(term, ()))

    def idf(self, term: str) -> float:
        """Okapi idf of `term` (0.0 when absent), with rank_bm25's floor for negative values."""
        posting = self._postings.get(term)
        if not posting:
            return 0.0
        value = self._raw_idf(len(posting))
        return value if value >= 0 else self.epsilon * self._average_idf()

    def _term_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        cached = self._arrays.get(term)
        if cached is None:
            posting = self._postings[term]
            slots = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            tfs = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
            cached = self._arrays[term] = (slots, tfs)
        return cached

    def _scored(
        self, query: Iterable[str], keys: Collection[Hashable] | None, weights: dict[str, float] | None = None
    ) -> _Scored:
        """Slots (ascending) and scores of the documents containing a query term (× its weight, if given)."""
        n = len(self._slot)
        terms = [t for t in query if t in self._postings]
        if not n or not terms:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        avgdl = self._total_len / n
        k1, b = self.k1, self.b
        acc = np.zeros(len(self._keys))
        hit = np.zeros(len(self._keys), dtype=bool)
        avg_idf: float | None = None
        for term in terms:  # duplicates count twice, as in rank_bm25
            idf = self._raw_idf(len(self._postings[term]))
            if idf < 0:
                avg_idf = self._average_idf() if avg_idf is None else avg_idf
                idf = self.epsilon * avg_idf
            slots, tfs = self._term_arrays(term)
            norm = tfs + k1 * (1 - b + b * self._lens[slots] / avgdl)
            if weights is not None:
                idf *= weights.get(term, 1.0)
            acc[slots] += idf * tfs * (k1 + 1) / norm
            hit[slots] = True
        if keys is not None:
            allowed = np.zeros(len(self._keys), dtype=bool)
            allowed[[self._slot[k] for k in keys if k in self._slot]] = True
            hit &= allowed
        slots = np.flatnonzero(hit)
        return slots, acc[slots]

    def dense(
        self, query: Iterable[str], n: int, keys: Collection[Hashable] | None = None
    ) -> tuple[np.ndarray, list[int]]:
        """(score of every slot, the `n` best matching slots best first), for neighbour lookups."""
        slots, values = self._scored(query, keys)
        acc = np.zeros(len(self._keys))
        acc[slots] = values
        return acc, slots[_best_first(values, n)].tolist()

    def by_position(
        self,
        query: Iterable[str],
        size: int,
        keys: Collection[Hashable] | None = None,
        weights: dict[str, float] | None = None,
    ) -> np.ndarray:
        """Scores laid out by position (`size` long; 0 where nothing matched).

        A matching document scores at least 1e-3: Okapi's idf is 0 or negative for a term in half
        the documents of a tiny corpus, and a match must still count as evidence. `weights`
        multiplies each term's contribution (default 1).
        """
        slots, values = self._scored(query, keys, weights)
        out = np.zeros(size)
        pos = self._pos[slots]
        ok = (pos >= 0) & (pos < size)
        out[pos[ok]] = np.maximum(values[ok], 1e-3)
        return out

    def slot_of(self, key: Hashable) -> int | None:
        """The slot of a document (an index into `dense`'s array), None when absent."""
        return self._slot.get(key)

    def terms_of(self, key: Hashable) -> Counter[str]:
        """The term counts of a document (empty when absent)."""
        return self._doc_terms.get(key) or Counter()

    def key_of(self, slot: int) -> Hashable | None:
        """The document key of a slot (None once removed)."""
        return self._keys[slot]

    def scores(self, query: Iterable[str], keys: Collection[Hashable] | None = None) -> dict[Hashable, float]:
        """BM25 score of every document containing a query term (optionally only those in `keys`)."""
        slots, values = self._scored(query, keys)
        return {self._keys[s]: v for s, v in zip(slots.tolist(), values.tolist(), strict=True)}

    def top(
        self, query: Iterable[str], n: int, keys: Collection[Hashable] | None = None
    ) -> list[tuple[Hashable, float]]:
        """The `n` best (key, score) pairs, best first (ties: the earlier-added document first)."""
        slots, values = self._scored(query, keys)
        order = _best_first(values, n)
        return [
            (self._keys[s], v) for s, v in zip(slots[order].tolist(), values[order].tolist(), strict=True)
        ]

    def best_by(
        self,
        query: Iterable[str],
        n: int,
        group_of: Callable[[Hashable], Hashable],
        keys: Collection[Hashable] | None = None,
    ) -> dict[Hashable, float]:
        """The `n` best groups of documents, each scored by its best document (best first).

        Walks documents best first and stops once `n` groups are seen, so a query matching most
        of a large corpus costs a partial sort, not a Python loop over every match.
        """
        slots, values = self._scored(query, keys)
        best: dict[Hashable, float] = {}
        want = max(4 * n, 32)
        while True:
            order = _best_first(values, want)
            best.clear()
            for s, v in zip(slots[order].tolist(), values[order].tolist(), strict=True):
                group = group_of(self._keys[s])
                if group not in best:
                    best[group] = v
                    if len(best) == n:
                        return best
            if want >= len(values):
                return best
            want *= 4

    def term_idfs(self, tokens: Iterable[str]) -> dict[str, float]:
        """Idf of each distinct token (for keyword extraction)."""
        return {t: self.idf(t) for t in set(tokens)}


def _best_first(values: np.ndarray, n: int) -> np.ndarray:
    """Indices of the `n` largest values, best first; ties keep index order (deterministic)."""
    if n <= 0 or not len(values):
        return np.zeros(0, dtype=np.int64)
    if n < len(values):
        threshold = np.partition(values, len(values) - n)[len(values) - n]
        candidates = np.flatnonzero(values >= threshold)  # all ties at the cut, in index order
    else:
        candidates = np.arange(len(values))
    order = candidates[np.argsort(-values[candidates], kind="stable")]
    return order[:n]
