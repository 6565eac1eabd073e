"""Value types of the memory layer: settings, blocks, search hits and errors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "memory_namespace",
    "Block",
    "BlockHit",
    "MemorySettings",
    "UnknownBlockError",
    "UnknownDataIdError",
]


@dataclass(frozen=True)
class MemorySettings:
    """Tunable knobs of `BlockMemory` (pass any of them as keyword arguments).

    Chunking: a block holds `min_block_messages`..`max_block_messages` messages (a closure is never
    split, so a long tool closure may exceed the maximum); `gap_minutes` of silence always cuts;
    adjacent pieces merge when their embedding cosine ≥ `merge_threshold`.
    Search: see docs/memory.md ("How relevance and recency combine"). `search(k)` returns k hits;
    `top_k` caps what is disclosed into a prompt (the `search_block` tool), not the search API.
    Short-term summaries: runs of `summary_min_blocks`..`summary_max_blocks` consecutive ordinary
    (untagged, unimportant) blocks older than `summary_after_days` (0 = never) are merged into one
    summary line, checked every `summary_every` new blocks of a namespace (bench/memory_tiers.py); the
    newest `summary_lines` of them outline older history in the disclosed window.
    Long-term facts (`memory.facts`) take at most `facts_share` of a window's budget. When a
    window would pass `compress_at` of its budget, its oldest messages are replaced by their
    block's gist first (`memory.disclosure`).
    """

    min_block_messages: int = 3
    max_block_messages: int = 8
    gap_minutes: float = 5.0
    merge_threshold: float = 0.72
    offload_tokens: int = 2000
    preview_tokens: int = 160
    top_k: int = 8
    candidates: int = 64
    unit_candidates: int = 128
    window_weight: float = 0.5
    window_weight2: float = 0.25
    answer_weight: float = 1.0
    block_weight: float = 0.3
    piece_weight: float = 0.5
    message_vectors: bool = True
    short_prior: float = 1.0
    time_boost: float = 1.0
    speaker_boost: float = 0.2
    speaker_terms: bool = False
    speaker_vector: bool = False
    stem_english: bool = True
    set_spread: float = 1.0
    expansion_weight: float = 0.3
    expansion_docs: int = 3
    expansion_terms: int = 6
    expansion_reach: int = 2
    expansion_df: float = 0.01
    expansion_repeat: int = 2
    concept_weight: float = 0.3
    answer_classes: float = 1.0
    category_classes: float = 2.0
    char_weight: float = 0.5
    question_weight: float = 0.3
    correction_weight: float = 1.0
    fusion: str = "weighted"
    vector_weight: float = 0.8
    cjk_vector_weight: float = 0.5
    multilingual_embeddings: bool = False
    half_life_days: float = 30.0
    decay_floor: float = 0.9
    critical_boost: float = 2.0
    summary_boost: float = 1.5
    loose_messages: int = 5
    block_list_limit: int = 10
    longterm_half_life_days: float = 180.0
    longterm_min_strength: float = 0.05
    summary_after_days: float = 60.0
    summary_min_blocks: int = 3
    summary_max_blocks: int = 8
    summary_lines: int = 5
    summary_every: int = 8
    facts_share: float = 0.15
    compress_at: float = 0.8

    @property
    def decay_lambda(self) -> float:
        """λ of `exp(-λ·Δt)` per second, from the half-life."""
        return math.log(2) / (self.half_life_days * 86400.0)


@dataclass
class Block:
    """A semantic block: consecutive messages forming closures, with DESIGN.md metadata."""

    namespace: str
    block_id: str
    todo_id: str
    block_type: str
    keywords: list[str]
    core_semantic: str
    create_time: str
    data_ids: list[str]
    message_ids: list[str]
    text: str
    created_at: float
    last_at: float
    tags: list[str] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        """The block metadata exactly as DESIGN.md lists it."""
        return {
            "block_id": self.block_id,
            "todo_id": self.todo_id,
            "block_type": self.block_type,
            "keywords": list(self.keywords),
            "core_semantic": self.core_semantic,
            "create_time": self.create_time,
            "data_ids": list(self.data_ids),
        }


@dataclass(frozen=True)
class BlockHit:
    """One search result: messages of a block (or long-term fact) with their fused, decayed, boosted score.

    `message_ids` are exactly the messages `text` quotes (one `role: content` line each);
    `block_id` and `metadata["block_message_ids"]` give the block around them.
    """

    block_id: str
    message_ids: list[str]
    text: str
    score: float
    metadata: dict[str, Any]


class UnknownDataIdError(KeyError):
    """A `store://` id that does not exist (or belongs to another user or conversation)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown data id"


class UnknownBlockError(KeyError):
    """A block id that does not exist in the namespace."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown block id"


def memory_namespace(agent_name: str, user_id: str, conversation_id: str) -> str:
    """Key of an agent's chat memory: `{agentName}_{userId}_{conversationId}` (not tied to a plan).

    `%` and `_` inside the user and conversation ids are escaped (`%25`, `%5F`), so the last two
    `_` always delimit them: user "a_b" + conversation "c" and user "a" + conversation "b_c" get
    different namespaces (agent names may contain `_`; they come from the registry).
    """
    return f"{agent_name}_{_escape_id(user_id)}_{_escape_id(conversation_id)}"


def _escape_id(value: str) -> str:
    return value.replace("%", "%25").replace("_", "%5F")
