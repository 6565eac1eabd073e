"""Focused hit text: a long block is quoted by its closures that match the query.

A hit costs the tokens of its text, so a block longer than `hit_tokens` is cut down to its
pieces (Q&A or tool-call closures, never split) ranked by the idf mass of query terms they
contain, kept in their original order; the rest is summarised as one "omitted" line. The hit's
`message_ids` then name exactly the messages quoted; the block's full id list stays in metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.messages import BaseMessage

from memory.chunker import Entry, closures
from memory.metadata import block_text, search_text
from memory.text import search_terms
from memory.tokens import count_tokens
from memory.types import MemorySettings

__all__ = ["OMITTED", "focus"]

OMITTED = "…（本块另有 {n} 条消息未显示）"


def focus(
    messages: Sequence[BaseMessage],
    query_terms: Sequence[str],
    idf: Callable[[str], float],
    settings: MemorySettings,
) -> tuple[str, list[BaseMessage]]:
    """Text and messages to quote for one hit (the whole block when it fits `hit_tokens`)."""
    full = block_text(messages)
    if count_tokens(full) <= settings.hit_tokens or len(messages) < 2:
        return full, list(messages)
    pieces = closures([Entry(i, m, 0.0, "") for i, m in enumerate(messages)])
    wanted = set(query_terms)

    def weight(piece: list[Entry]) -> float:
        terms = set(search_terms(search_text([e.message for e in piece])))
        return sum(max(idf(t), 0.01) for t in terms & wanted)

    order = sorted(range(len(pieces)), key=lambda i: (-weight(pieces[i]), i))
    chosen: list[int] = []
    used = 0
    for i in order:
        cost = count_tokens(block_text([e.message for e in pieces[i]]))
        if chosen and (used + cost > settings.hit_tokens or weight(pieces[i]) == 0):
            continue
        chosen.append(i)
        used += cost
    kept = [e.message for i in sorted(chosen) for e in pieces[i]]
    text = block_text(kept)
    if len(kept) < len(messages):
        text += "\n" + OMITTED.format(n=len(messages) - len(kept))
    return text, kept
