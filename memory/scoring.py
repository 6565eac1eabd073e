"""How relevance and recency combine: fusion of BM25 and vectors, decay, tag boosts, ranking.

`score = relevance × decay × boost` where

* relevance ∈ [0, 1] fuses BM25 (normalised by the best BM25 among the candidates) and cosine
  similarity: weighted sum (default) or reciprocal-rank fusion (`fusion="rrf"`). The vector weight
  shrinks with the query's share of CJK characters unless the embedder is multilingual: MiniLM
  maps most Chinese to `[UNK]`, so its cosine is noise there and jieba BM25 must carry the score;
* decay = floor + (1 − floor)·exp(−λ·Δt), Δt measured back from the namespace's newest message,
  so an old block keeps at least `decay_floor` of its relevance — an old fact that is the only
  real match still outranks a fresh block that merely shares a common word;
* boost = 2.0 for `critical`, 1.5 for `summary_anchor` (the larger applies), times `factor`
  (1 + `time_boost` for a message inside the time span the question names, `memory.when`).

A candidate is a message of a block (`unit` = its index; -1 = the whole block). Ties break on
newer block first, then block id, then message order, so equal scores always rank the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from memory.text import cjk_ratio
from memory.types import MemorySettings

__all__ = ["Candidate", "decay", "rank"]

_RRF_K = 60.0


@dataclass
class Candidate:
    """A message (or block) found by BM25 and/or vectors, with what scoring needs."""

    namespace: str
    block_id: str
    unit: int = -1
    bm25: float = 0.0
    cosine: float = 0.0
    last_at: float = 0.0
    seq: int = 0
    tags: list[str] = field(default_factory=list)
    factor: float = 1.0
    relevance: float = 0.0
    score: float = 0.0


def vector_weight(query: str, settings: MemorySettings) -> float:
    """Weight of the vector side for this query (language-aware).

    The CJK share of a query gets `cjk_vector_weight` instead of `vector_weight` (MiniLM reads
    little Chinese), unless the embedder is multilingual.
    """
    if settings.multilingual_embeddings:
        return settings.vector_weight
    share = cjk_ratio(query)
    return settings.vector_weight * (1.0 - share) + settings.cjk_vector_weight * share


def decay(delta_seconds: float, settings: MemorySettings) -> float:
    """Recency factor in [decay_floor, 1]."""
    fresh = math.exp(-settings.decay_lambda * max(delta_seconds, 0.0))
    return settings.decay_floor + (1.0 - settings.decay_floor) * fresh


def _boost(tags: list[str], settings: MemorySettings) -> float:
    boost = 1.0
    if "critical" in tags:
        boost = max(boost, settings.critical_boost)
    if "summary_anchor" in tags:
        boost = max(boost, settings.summary_boost)
    return boost


def _relevance(cands: list[Candidate], wv: float, fusion: str) -> None:
    if fusion == "rrf":
        by_bm = sorted((c for c in cands if c.bm25 > 0), key=lambda c: -c.bm25)
        by_vec = sorted(cands, key=lambda c: -c.cosine)
        raw = {id(c): 0.0 for c in cands}
        for rank_, c in enumerate(by_bm):
            raw[id(c)] += (1 - wv) / (_RRF_K + rank_ + 1)
        for rank_, c in enumerate(by_vec):
            raw[id(c)] += wv / (_RRF_K + rank_ + 1)
        top = max(raw.values(), default=0.0) or 1.0
        for c in cands:
            c.relevance = raw[id(c)] / top
        return
    if fusion != "weighted":
        raise ValueError(f"fusion={fusion!r} is not supported; use 'weighted' or 'rrf'.")
    best = max((c.bm25 for c in cands), default=0.0) or 1.0
    for c in cands:
        c.relevance = (1 - wv) * (c.bm25 / best) + wv * max(c.cosine, 0.0)


def rank(
    cands: list[Candidate], query: str, reference_at: float, settings: MemorySettings
) -> list[Candidate]:
    """Score candidates in place and return them best first (deterministic order)."""
    _relevance(cands, vector_weight(query, settings), settings.fusion)
    for c in cands:
        boost = _boost(c.tags, settings) * c.factor
        c.score = c.relevance * decay(reference_at - c.last_at, settings) * boost
    return sorted(cands, key=lambda c: (-round(c.score, 12), -c.last_at, c.namespace, c.block_id, c.unit))
