"""Offline planning: route a request to a workflow template or an agent by BM25 similarity."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory.bm25 import IncrementalBM25
from memory.text import tokenize
from nodes.kit.registry import AgentSpec
from tools.results import Results

__all__ = ["Route", "best_candidate", "drop_reusable_steps"]


@dataclass(frozen=True)
class Route:
    """Something a request can be routed to: a workflow template or a single agent.

    `texts` are matched one by one (description, then each example): a request that closely
    matches one example should not be diluted by a long description.
    """

    name: str
    texts: tuple[str, ...]
    steps: tuple[dict, ...]


def best_candidate(query: str, candidates: Sequence[Route]) -> Route | None:
    """The candidate most similar to `query`, or None when nothing shares a term with it.

    Each candidate scores as its best text under BM25 over jieba/word tokens (memory's index with
    Lucene's non-negative idf: a few dozen texts would give common terms a negative Okapi idf);
    ties go to the earlier candidate (templates are listed before single agents).
    """
    if not candidates:
        return None
    index = IncrementalBM25(smooth_idf=True)
    for i, candidate in enumerate(candidates):
        for j, text in enumerate(candidate.texts):
            index.add((i, j), tokenize(text))
    scores = index.scores(dict.fromkeys(tokenize(query)))
    best_of = [0.0] * len(candidates)
    for (i, _), score in scores.items():  # type: ignore[misc]
        best_of[i] = max(best_of[i], score)
    best = max(range(len(candidates)), key=lambda i: (best_of[i], -i))
    return candidates[best] if best_of[best] > 0 else None


def drop_reusable_steps(
    query: str, steps: list[dict], specs: Mapping[str, AgentSpec], results: Results
) -> tuple[list[dict], list[str]]:
    """Remove steps whose result the user says they already have and the conversation holds.

    Returns the remaining steps (renumbered from 0, dependencies rewired) and the dropped agent names.
    """
    dropped: dict[int, str] = {}
    for step in steps:
        spec = specs.get(step["agentName"])
        if spec is None or not spec.produces or not any(p in query for p in spec.reuse_phrases):
            continue
        if results.latest(spec.produces[0]) is not None:
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
