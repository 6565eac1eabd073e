"""Hybrid ranking of knowledge passages: BM25 (jieba tokens) fused with vector similarity.

A hit only counts as an answer source when it is *relevant*: enough of the question's weighted
terms occur in it (IDF-weighted coverage), its vector similarity is very high, or the question is
close in meaning to the English summary of its document (a note's `English:` line; it lets an
English question find a Chinese note in words the note does not use). Otherwise the agent says it
does not know instead of citing something merely nearby.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

from memory.bm25 import IncrementalBM25
from memory.text import QUESTION_WORDS, tokenize
from tools.kb.corpus import KbPassage
from tools.segment import declared_terms, term_tokenizer

__all__ = ["HybridRanker", "KbHit", "RankerSettings", "passage_tokens"]


@dataclass(frozen=True)
class RankerSettings:
    """Fusion weight and relevance thresholds (measured on the shipped corpus; see tests)."""

    bm25_weight: float = 0.6
    min_coverage: float = 0.5
    min_vector: float = 0.8
    min_summary: float = 0.45


@dataclass(frozen=True)
class KbHit:
    """A ranked passage with the evidence behind its rank."""

    passage: KbPassage
    score: float
    bm25: float
    vector: float
    coverage: float
    relevant: bool
    summary: float = 0.0  # similarity of the question to the English summary of the passage's document


def _contained(terms: frozenset[str], passage: KbPassage, known: set[str]) -> list[str]:
    """The declared terms a passage's text contains that its tokens lack (cut apart by jieba)."""
    text = f"{passage.title}\n{passage.tags}\n{passage.text}".lower()
    return [t for t in sorted(terms) if t not in known and t in text]


def passage_tokens(passage: KbPassage) -> list[str]:
    """The BM25 tokens of a passage (title, tags, English summary and text)."""
    return tokenize(f"{passage.title}\n{passage.tags}\n{passage.english}\n{passage.text}")


class HybridRanker:
    """Ranks a fixed set of passages; rebuild it when the passages change (it is cheap)."""

    def __init__(
        self,
        passages: Sequence[KbPassage],
        settings: RankerSettings | None = None,
        tokens: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """`tokens` maps passage ids to their `passage_tokens` when already known (saves re-tokenizing)."""
        self.passages = list(passages)
        self.settings = settings or RankerSettings()
        known = tokens or {}
        docs = [
            list(known[p.passage_id]) if p.passage_id in known else passage_tokens(p) for p in self.passages
        ]
        self._position = {p.passage_id: i for i, p in enumerate(self.passages)}
        # the corpus's own terms (its notes' tags) are words of the passages that contain them,
        # however jieba cut them there; the question is segmented with them (tools.segment)
        self._segmenter = term_tokenizer(declared_terms(p.tags for p in self.passages))
        for doc, passage in zip(docs, self.passages, strict=True):
            doc.extend(_contained(self._segmenter.terms, passage, set(doc)))
        self._terms = [set(d) for d in docs]
        self._bm25 = IncrementalBM25()
        for i, doc in enumerate(docs):
            self._bm25.add(i, doc)
        n = len(docs)
        df: dict[str, int] = {}
        for terms in self._terms:
            for t in terms:
                df[t] = df.get(t, 0) + 1
        self._idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}
        self._unknown_idf = math.log((n + 1) / 0.5)

    def query_terms(self, query: str) -> list[str]:
        """The topic terms of `query` (question words dropped, order kept, no duplicates)."""
        # both cuts: the corpus's terms whole (绿证), and jieba's own pieces as the passages hold them
        cuts = [*self._segmenter.tokenize(query), *tokenize(query)]
        terms = (t for t in cuts if t not in QUESTION_WORDS)
        # A lone character the corpus never uses ("定" in "怎么定") is grammar, not topic.
        return list(dict.fromkeys(t for t in terms if len(t) > 1 or t in self._idf))

    def term_weights(self, terms: Sequence[str]) -> dict[str, float]:
        """IDF weight of each term; a term the corpus never uses weighs most."""
        return {t: self._idf.get(t, self._unknown_idf) for t in terms}

    def rank(
        self,
        query: str,
        vector_scores: Mapping[str, float],
        k: int = 5,
        summary_scores: Mapping[str, float] | None = None,
    ) -> list[KbHit]:
        """Top `k` passages for `query`.

        `vector_scores` maps passage_id → cosine similarity of the passage text; `summary_scores`
        maps doc_key → cosine similarity of the document's English summary.
        """
        terms = self.query_terms(query)
        if not self.passages or not terms:
            return []
        matched: dict[int, float] = self._bm25.scores(terms)  # type: ignore[assignment]  # keys: positions
        top = max([float(v) for v in matched.values() if v > 0], default=1.0)
        weights = self.term_weights(terms)
        total = sum(weights.values())
        s = self.settings
        # Only passages holding a query term or a vector score can rank above zero; the rest (all
        # alike at score 0) fill up to k in passage order, as a full sort would leave them.
        summaries = summary_scores or {}
        scored = set(matched) | {self._position[p] for p in vector_scores if p in self._position}
        scored |= {i for i, p in enumerate(self.passages) if summaries.get(p.doc_key, 0.0) > 0}
        filler = list(islice((i for i in range(len(self.passages)) if i not in scored), k))
        hits = []
        for i in sorted([*scored, *filler]):
            passage = self.passages[i]
            coverage = sum(w for t, w in weights.items() if t in self._terms[i]) / total
            vector = max(0.0, float(vector_scores.get(passage.passage_id, 0.0)))
            summary = max(0.0, float(summaries.get(passage.doc_key, 0.0)))
            bm25_norm = max(0.0, float(matched.get(i, 0.0))) / top
            score = s.bm25_weight * bm25_norm + (1 - s.bm25_weight) * max(vector, summary)
            relevant = coverage >= s.min_coverage or vector >= s.min_vector or summary >= s.min_summary
            hits.append(KbHit(passage, score, bm25_norm, vector, coverage, relevant, summary))
        hits.sort(key=lambda h: (h.relevant, h.score), reverse=True)
        return hits[:k]
