"""An incremental inverted-index BM25 whose scores equal `rank_bm25.BM25Okapi` on the same corpus.

rank_bm25 rescans every document per query and cannot add one; this index keeps postings, document
lengths and a histogram of document frequencies, so adding or removing a document is
O(its terms) and the average idf (needed for Okapi's negative-idf floor) is O(distinct df values).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Sequence

__all__ = ["IncrementalBM25"]


class IncrementalBM25:
    """Okapi BM25 over a growing set of documents keyed by any hashable id.

    `k1`, `b` and `epsilon` default to rank_bm25's; `scores(query)` returns every document that
    contains a query term, with the score `BM25Okapi.get_scores` gives it (possibly 0.0: Okapi's
    idf is exactly 0 for a term in half the documents, and a match must still be a candidate).
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._postings: dict[str, dict[Hashable, int]] = {}
        self._doc_len: dict[Hashable, int] = {}
        self._doc_terms: dict[Hashable, Counter[str]] = {}
        self._total_len = 0
        self._df_hist: Counter[int] = Counter()

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, key: object) -> bool:
        return key in self._doc_len

    def add(self, key: Hashable, tokens: Sequence[str]) -> None:
        """Index a document (replacing any document with the same key)."""
        if key in self._doc_len:
            self.remove(key)
        counts = Counter(tokens)
        self._doc_terms[key] = counts
        self._doc_len[key] = len(tokens)
        self._total_len += len(tokens)
        for term, tf in counts.items():
            posting = self._postings.setdefault(term, {})
            self._move_df(len(posting), len(posting) + 1)
            posting[key] = tf

    def remove(self, key: Hashable) -> None:
        """Drop a document; unknown keys are ignored."""
        counts = self._doc_terms.pop(key, None)
        if counts is None:
            return
        self._total_len -= self._doc_len.pop(key)
        for term in counts:
            posting = self._postings[term]
            self._move_df(len(posting), len(posting) - 1)
            del posting[key]
            if not posting:
                del self._postings[term]

    def _move_df(self, old: int, new: int) -> None:
        if old:
            self._df_hist[old] -= 1
            if not self._df_hist[old]:
                del self._df_hist[old]
        if new:
            self._df_hist[new] += 1

    def _raw_idf(self, df: int) -> float:
        n = len(self._doc_len)
        return math.log(n - df + 0.5) - math.log(df + 0.5)

    def _average_idf(self) -> float:
        vocab = sum(self._df_hist.values())
        if not vocab:
            return 0.0
        return sum(count * self._raw_idf(df) for df, count in self._df_hist.items()) / vocab

    def idf(self, term: str) -> float:
        """Okapi idf of `term` (0.0 when absent), with rank_bm25's floor for negative values."""
        posting = self._postings.get(term)
        if not posting:
            return 0.0
        value = self._raw_idf(len(posting))
        return value if value >= 0 else self.epsilon * self._average_idf()

    def scores(self, query: Iterable[str], keys: Collection[Hashable] | None = None) -> dict[Hashable, float]:
        """BM25 score of every document containing a query term (optionally only those in `keys`)."""
        n = len(self._doc_len)
        if not n:
            return {}
        avgdl = self._total_len / n
        k1, b = self.k1, self.b
        out: dict[Hashable, float] = {}
        avg_idf: float | None = None
        for term in query:
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = self._raw_idf(len(posting))
            if idf < 0:
                avg_idf = self._average_idf() if avg_idf is None else avg_idf
                idf = self.epsilon * avg_idf
            doc_len = self._doc_len
            for key, tf in posting.items():
                if keys is not None and key not in keys:
                    continue
                norm = tf + k1 * (1 - b + b * doc_len[key] / avgdl)
                out[key] = out.get(key, 0.0) + idf * tf * (k1 + 1) / norm
        return out

    def top(
        self, query: Iterable[str], n: int, keys: Collection[Hashable] | None = None
    ) -> list[tuple[Hashable, float]]:
        """The `n` best (key, score) pairs, best first."""
        scored = self.scores(query, keys)
        return heapq.nlargest(n, scored.items(), key=lambda kv: kv[1])

    def term_idfs(self, tokens: Iterable[str]) -> dict[str, float]:
        """Idf of each distinct token (for keyword extraction)."""
        return {t: self.idf(t) for t in set(tokens)}
