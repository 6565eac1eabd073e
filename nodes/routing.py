"""Offline routing: what a piece of text asks for, by BM25 over what the agents and templates say they do."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.bm25 import IncrementalBM25
from memory.text import QUESTION_WORDS, tokenize

__all__ = ["Route", "RouteIndex", "best_candidate"]


@dataclass(frozen=True)
class Route:
    """Something a request can be routed to: a workflow template or a single agent.

    `texts` are matched one by one (description, then each example): a request that closely
    matches one example should not be diluted by a long description.
    """

    name: str
    texts: tuple[str, ...]
    steps: tuple[dict, ...]

    @property
    def is_template(self) -> bool:
        """True for a workflow template (several steps, or one step under a workflow's own name)."""
        return len(self.steps) != 1 or self.steps[0]["agentName"] != self.name


class RouteIndex:
    """BM25 over every route's texts; a route scores as its best text.

    Memory's index with Lucene's non-negative idf: with a few dozen texts, Okapi's idf would go
    negative for common terms.
    """

    def __init__(self, routes: Sequence[Route]) -> None:
        self.routes = list(routes)
        self._index = IncrementalBM25(smooth_idf=True)
        for i, route in enumerate(self.routes):
            for j, text in enumerate(route.texts):
                self._index.add((i, j), _content_terms(text))
        self._terms = [[set(_content_terms(text)) for text in route.texts] for route in self.routes]
        # a term no route uses weighs at least as much as the rarest known one
        known = {t for texts in self._terms for terms in texts for t in terms}
        self._unknown_idf = max((self._index.idf(t) for t in known), default=1.0)
        self._weight = [
            [sum(self._index.idf(t) for t in terms) or 1.0 for terms in texts] for texts in self._terms
        ]

    def shared_terms(self, text: str) -> list[int]:
        """Per route, how many distinct content terms of `text` its best-sharing text contains."""
        terms = set(_content_terms(text))
        return [max((len(terms & known) for known in texts), default=0) for texts in self._terms]

    def closeness(self, text: str) -> list[float]:
        """Per route, how nearly one of its texts says the same as `text` (0–1).

        For each text: the idf-weighted share of `text`'s terms it contains, and of its own terms
        `text` contains; the smaller of the two, and a route's best text counts.
        """
        terms = set(_content_terms(text))
        if not terms:
            return [0.0] * len(self.routes)
        idf = {t: self._index.idf(t) or self._unknown_idf for t in terms}
        total = sum(idf.values())
        best = [0.0] * len(self.routes)
        for i, texts in enumerate(self._terms):
            for known, own in zip(texts, self._weight[i], strict=True):
                shared = terms & known
                forward = sum(idf[t] for t in shared) / total
                backward = sum(self._index.idf(t) for t in shared) / own
                best[i] = max(best[i], min(forward, backward))
        return best

    def scores(self, text: str) -> list[float]:
        """Score of every route for `text` (0.0 when it shares no term); question words do not count."""
        best = [0.0] * len(self.routes)
        terms = dict.fromkeys(_content_terms(text))
        for key, score in self._index.scores(terms).items():
            route = key[0]  # type: ignore[index]
            best[route] = max(best[route], score)
        return best

    def best(self, text: str) -> tuple[Route, float] | None:
        """The best route for `text` and its score (ties: the earlier route), or None."""
        if not self.routes:
            return None
        scores = self.scores(text)
        i = max(range(len(scores)), key=lambda k: (scores[k], -k))
        return (self.routes[i], scores[i]) if scores[i] > 0 else None


# Question words and pointers shape a request but name nothing; "算" (calculate) names work.
_NOT_CONTENT = (QUESTION_WORDS - {"算"}) | frozenset(
    "这个 那个 这些 那些 基于 根据 一份 一个 一下 给我 帮忙".split()
)


def _content_terms(text: str) -> list[str]:
    """The words of `text` that can name work."""
    return [t for t in tokenize(text) if t not in _NOT_CONTENT]


def best_candidate(query: str, routes: Sequence[Route]) -> Route | None:
    """The route most similar to `query`, or None when nothing shares a term with it."""
    found = RouteIndex(routes).best(query)
    return None if found is None else found[0]
