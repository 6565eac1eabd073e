"""Block memory: bounded prompts over unbounded conversations, with hybrid search.

`BlockMemory` chunks messages into semantic blocks, searches them (BM25 + vectors, decay, tag
boosts), builds the disclosed window for each model call, offloads big tool results and keeps a
per-user long-term tier.
"""

from memory.block_memory import BlockMemory
from memory.disclosure import WindowRef
from memory.types import Block, BlockHit, MemorySettings, UnknownBlockError, UnknownDataIdError

__all__ = [
    "Block",
    "BlockHit",
    "BlockMemory",
    "MemorySettings",
    "UnknownBlockError",
    "UnknownDataIdError",
    "WindowRef",
]
