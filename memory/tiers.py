"""Memory tiers (seed 004): which blocks become long-term facts, and when facts are forgotten.

* working memory — the window `BlockMemory.disclose` builds for one model call;
* short-term — the conversation's blocks (searchable, never deleted);
* long-term — per user, across conversations: copies of blocks tagged `critical` or judged
  important (a stated preference or an explicit "remember"), stored in the namespace
  `longterm_namespace(user_id)` and searched together with every conversation of that user.
  A fact's strength is `importance × 0.5^(age / half-life)`; below `longterm_min_strength` it
  is forgotten. Critical facts start at 1.0, judged ones at 0.6.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import HumanMessage

from memory.chunker import Entry

__all__ = ["LONGTERM_PREFIX", "importance", "longterm_namespace", "strength"]

LONGTERM_PREFIX = "longterm::"
_IMPORTANT = re.compile(
    r"(请?记住|别忘了|一定要|我(更|比较|最)?(喜欢|偏好|倾向|习惯|不喜欢|讨厌)|以后都|我的.{1,12}是|"
    r"\bremember\b|\bdon't forget\b|\bi (always|never|prefer|like|love|hate|dislike)\b|\bmy [a-z ]{1,20} is\b)",
    re.IGNORECASE,
)


def longterm_namespace(user_id: str) -> str:
    """Namespace holding a user's long-term facts."""
    return f"{LONGTERM_PREFIX}{user_id}"


def importance(entries: Sequence[Entry]) -> float:
    """1.0 for a block with a `critical` message, 0.6 for a stated preference or fact, else 0."""
    if any("critical" in e.tags for e in entries):
        return 1.0
    for e in entries:
        if isinstance(e.message, HumanMessage) and isinstance(e.message.content, str):
            if _IMPORTANT.search(e.message.content):
                return 0.6
    return 0.0


def strength(importance_: float, age_seconds: float, half_life_days: float) -> float:
    """Remaining strength of a long-term fact after `age_seconds`."""
    return importance_ * 0.5 ** (max(age_seconds, 0.0) / (half_life_days * 86400.0))
