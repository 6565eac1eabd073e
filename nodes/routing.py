"""Offline planning: route a request to a workflow template or an agent by hybrid similarity."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory.text import cjk_ratio, tokenize
from nodes.registry import AgentSpec
from nodes.step import AgentMemory, last_tool_call

__all__ = ["Candidate", "best_candidate", "drop_reusable_steps"]


@dataclass(frozen=True)
class Candidate:
    """Something a request can be routed to: a workflow template or a single agent.

    `texts` are matched one by one (description, then each example): a request that closely
    matches one example should not be diluted by a long description.
    """

    name: str
    texts: tuple[str, ...]
    steps: tuple[dict, ...]


def _bm25_scores(query: list[str], docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """Okapi BM25 with the non-negative idf variant (few documents: classic idf goes negative)."""
    n = len(docs)
    avg = sum(map(len, docs)) / max(n, 1) or 1.0
    df = Counter(t for d in docs for t in set(d))
    scores = []
    for doc in docs:
        tf = Counter(doc)
        score = 0.0
        for term in set(query):
            if term in tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(doc) / avg))
        scores.append(score)
    return scores


def best_candidate(query: str, candidates: Sequence[Candidate], embed=None) -> Candidate | None:  # noqa: ANN001
    """The candidate most similar to `query`, or None when nothing shares a term or meaning.

    BM25 over jieba/word tokens carries Chinese; vectors (when `embed` is given) only count in
    proportion to the query's non-CJK share, since MiniLM is nearly blind to Chinese. Ties go to the
    earlier candidate (templates are listed before single agents).
    """
    if not candidates:
        return None
    owners = [i for i, c in enumerate(candidates) for _ in c.texts]
    texts = [t for c in candidates for t in c.texts]
    per_text = _bm25_scores(tokenize(query), [tokenize(t) for t in texts])
    vector_weight = 1.0 - cjk_ratio(query)
    if embed is not None and vector_weight > 0.2:
        top = max(per_text) or 1.0
        q_vec = embed.embed_query(query)
        sims = [sum(a * b for a, b in zip(q_vec, d, strict=True)) for d in embed.embed_documents(texts)]
        per_text = [
            (1 - vector_weight) * s / top + vector_weight * max(v, 0.0)
            for s, v in zip(per_text, sims, strict=True)
        ]
    lexical = [0.0] * len(candidates)
    for owner, score in zip(owners, per_text, strict=True):
        lexical[owner] = max(lexical[owner], score)
    scores = lexical
    best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
    if scores[best] <= 0 or (embed is not None and vector_weight > 0.2 and scores[best] < 0.3):
        return None
    return candidates[best]


def drop_reusable_steps(
    query: str, steps: list[dict], specs: Mapping[str, AgentSpec], memory_of
) -> tuple[list[dict], list[str]]:  # noqa: ANN001
    """Remove steps whose result the user says they already have and that memory holds.

    Returns the remaining steps (renumbered from 0, dependencies rewired) and the dropped agent names.
    """
    dropped: dict[int, str] = {}
    for step in steps:
        spec = specs.get(step["agentName"])
        if spec is None or not spec.produces or not any(p in query for p in spec.reuse_phrases):
            continue
        memory: AgentMemory = memory_of(spec.name)
        if last_tool_call(memory, spec.produces[0]) is not None:
            dropped[step["seqNo"]] = spec.name
    kept = [s for s in steps if s["seqNo"] not in dropped]
    renumber = {s["seqNo"]: i for i, s in enumerate(kept)}
    return (
        [
            {
                **s,
                "seqNo": renumber[s["seqNo"]],
                "dependsOn": [renumber[d] for d in s.get("dependsOn", []) if d in renumber],
            }
            for s in kept
        ],
        list(dropped.values()),
    )
