"""Incremental semantic chunking: messages → closed pieces (closures) → blocks.

A *piece* is the smallest unit that must stay together: a Q&A closure (user words up to the
assistant's answer) or a tool-call closure (the AIMessage with `tool_calls` and every matching
ToolMessage). `split_pieces` cuts the pending messages into closed pieces and leaves the open tail
pending; `should_merge` decides whether a piece extends the newest block or starts a new one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from memory.types import MemorySettings

__all__ = ["Entry", "Tail", "closures", "is_topic_switch", "should_merge", "split_pieces"]

_TOPIC_CUES = re.compile(
    r"^\s*(另外|换个话题|换一个话题|顺便问|再问一个|新问题|接下来换|by the way|btw|another question|"
    r"new topic|switching topics|on a different note|unrelated)",
    re.IGNORECASE,
)


@dataclass
class Entry:
    """A stored message with what chunking needs to know about it."""

    seq: int
    message: BaseMessage
    created_at: float
    todo_id: str
    tags: list[str] = field(default_factory=list)


@dataclass
class Tail:
    """The newest block of a namespace, as far as merging is concerned."""

    block_id: str
    todo_id: str
    size: int
    last_at: float
    vec: list[float] | None


def _opened(message: BaseMessage) -> set[str]:
    if isinstance(message, AIMessage):
        return {str(c["id"]) for c in message.tool_calls if c.get("id")}
    return set()


def split_pieces(pending: list[Entry], settings: MemorySettings) -> tuple[list[list[Entry]], list[Entry]]:
    """Cut `pending` into closed pieces; the unfinished tail stays pending.

    A piece closes when the assistant answers without calling a tool and nothing is outstanding,
    before the next user message, before a silence of `gap_minutes`, or at the block maximum.
    A tool call and its results are never separated (an open call keeps the piece open).
    """
    gap = settings.gap_minutes * 60.0
    pieces: list[list[Entry]] = []
    current: list[Entry] = []
    outstanding: set[str] = set()
    for entry in pending:
        msg = entry.message
        if current and not outstanding:
            prev = current[-1]
            if (
                isinstance(msg, HumanMessage)
                or entry.created_at - prev.created_at >= gap
                or entry.todo_id != prev.todo_id
            ):
                pieces.append(current)
                current = []
        current.append(entry)
        outstanding |= _opened(msg)
        if isinstance(msg, ToolMessage):
            outstanding.discard(msg.tool_call_id)
        answered = isinstance(msg, AIMessage) and not msg.tool_calls
        if not outstanding and (answered or len(current) >= settings.max_block_messages):
            pieces.append(current)
            current = []
    return pieces, current


_UNBOUNDED = MemorySettings(max_block_messages=10**9, gap_minutes=10**9)


def closures(entries: list[Entry]) -> list[list[Entry]]:
    """`entries` cut into their Q&A and tool-call closures only (no size or time limit)."""
    pieces, rest = split_pieces(entries, _UNBOUNDED)
    return pieces + ([rest] if rest else [])


def is_topic_switch(piece: list[Entry]) -> bool:
    """True when the piece opens with an explicit cue ("另外", "换个话题", "by the way", …)."""
    first = next((e.message for e in piece if isinstance(e.message, HumanMessage)), None)
    return first is not None and isinstance(first.content, str) and bool(_TOPIC_CUES.match(first.content))


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def should_merge(
    tail: Tail | None, piece: list[Entry], vec: list[float] | None, settings: MemorySettings
) -> bool:
    """Whether `piece` extends the newest block instead of starting a new one.

    Hard cuts first (another todo, a silence of `gap_minutes`, an explicit topic switch, the size
    maximum); then a block below `min_block_messages` always absorbs the next piece, and a full
    one absorbs it only when their embeddings are at least `merge_threshold` similar.
    """
    if tail is None:
        return False
    first = piece[0]
    if (
        first.todo_id != tail.todo_id
        or first.created_at - tail.last_at >= settings.gap_minutes * 60.0
        or is_topic_switch(piece)
        or tail.size + len(piece) > settings.max_block_messages
    ):
        return False
    if tail.size < settings.min_block_messages:
        return True
    return tail.vec is not None and vec is not None and _cosine(tail.vec, vec) >= settings.merge_threshold
