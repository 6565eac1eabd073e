"""Questions that ask for a set ("which cities…", "都去过哪些…") get hits spread over many events.

A question such as "Which cities has Tom travelled to?" is answered by one turn of each of several
events, often sessions apart. Ranking by relevance lets one strong event fill the budget with its
neighbouring turns (each takes a share of its neighbours' score, `memory.recall`); for a set
question every further hit from a block that already has hits is worth less (× `set_spread` per
hit already taken from it), so the same budget covers more events. Other questions are ranked as
they were. The hits are the same messages in another order: `k` is still honoured.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

__all__ = ["asks_for_set", "spread"]

# "which cities", "what places", "which of the …": a question word before a plural noun (not a verb).
_EN_SET = re.compile(r"\b(?:which|what)\s+(?:of\s+the\s+)?([a-z]{2,}(?:ies|[^s']s))\b")
_NOT_PLURAL = frozenset("does has was is this his its yes bus gas plus".split())
_ZH_SET = ("哪些", "哪几")


def asks_for_set(query: str) -> bool:
    """Whether a question asks for several things: "which/what" + a plural noun, or 哪些 / 哪几."""
    if any(word in query for word in _ZH_SET):
        return True
    return any(m.group(1) not in _NOT_PLURAL for m in _EN_SET.finditer(query.lower()))


class _Ranked(Protocol):
    block_id: str
    score: float


T = TypeVar("T", bound=_Ranked)


def spread(ranked: Sequence[T], factor: float, k: int) -> list[T]:
    """The first `k` of `ranked` (best first) re-ranked greedily: × `factor` per hit already taken from a block."""
    heap = [(-c.score, i, 0) for i, c in enumerate(ranked)]
    heapq.heapify(heap)
    taken: dict[str, int] = {}
    out: list[T] = []
    while heap and len(out) < k:
        neg, i, seen = heapq.heappop(heap)
        block = ranked[i].block_id
        now = taken.get(block, 0)
        if now != seen:  # its block gained hits since this score was computed: re-queue it
            heapq.heappush(heap, (-ranked[i].score * factor**now, i, now))
            continue
        out.append(ranked[i])
        taken[block] = now + 1
    return out
