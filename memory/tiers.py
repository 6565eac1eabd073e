"""Memory tiers (seed 004): which blocks become long-term facts, and when facts are forgotten.

* working memory — the window `BlockMemory.disclose` builds for one model call;
* short-term — the conversation's blocks (searchable, never deleted) plus one-line summaries of
  runs of consecutive low-score blocks (old, untagged, unimportant), which outline the older
  history in the disclosed window once the block list no longer fits there;
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
from memory.types import MemorySettings

__all__ = [
    "LONGTERM_PREFIX",
    "importance",
    "longterm_namespace",
    "strength",
    "summary_cutoff",
    "summary_runs",
    "summary_text",
]

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


def summary_cutoff(settings: MemorySettings) -> float | None:
    """Age in seconds beyond which an untagged, unimportant block is low-score (None: never)."""
    days = settings.summary_after_days
    return None if days <= 0 else days * 86400.0


def summary_runs(rows: Sequence[dict], min_blocks: int, max_blocks: int) -> list[list[dict]]:
    """Runs of consecutive low-score blocks (same todo, no tags, not important) to merge.

    `rows` are old enough already, ordered by `seq`; a gap in `seq`, another todo, a tagged or
    important block ends a run. Runs shorter than `min_blocks` are left alone.
    """
    runs: list[list[dict]] = []
    current: list[dict] = []
    for row in rows:
        plain = not row["tags"] and row["extra"].get("importance", 0.0) == 0.0
        follows = (
            bool(current)
            and row["seq"] == current[-1]["seq"] + 1
            and row["todo_id"] == current[-1]["todo_id"]
        )
        if current and not (plain and follows):
            if len(current) >= min_blocks:
                runs.append(current)
            current = []
        if plain:
            current.append(row)
            if len(current) == max_blocks:
                runs.append(current)
                current = []
    if len(current) >= min_blocks:
        runs.append(current)
    return runs


def summary_text(run: Sequence[dict]) -> str:
    """One line for a run of blocks: their time span and gists (extractive, offline)."""
    first, last = run[0]["create_time"][:16], run[-1]["create_time"][:16]
    gists = "；".join(dict.fromkeys(r["core_semantic"] for r in run if r["core_semantic"]))
    return f"{first}～{last}（{len(run)} 个块）：{gists}"
