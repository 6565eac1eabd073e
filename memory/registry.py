"""One shared BlockMemory per data directory per process."""

from __future__ import annotations

import threading
from pathlib import Path

from langchain_core.embeddings import Embeddings

from memory.block_memory import BlockMemory

__all__ = ["open_memory"]

_instances: dict[Path, BlockMemory] = {}
_lock = threading.Lock()


def open_memory(data_dir: str | Path, embeddings: Embeddings | None = None) -> BlockMemory:
    """The process-wide BlockMemory of `data_dir` (data under `<data_dir>/memory/`).

    `embeddings=None` uses `memory.embeddings.embeddings_from_env()`; `PLANGRAPH_CHROMA_URL`
    switches vectors to a Chroma server. Later calls for the same resolved path return the same
    instance (their `embeddings` argument is then ignored).
    """
    root = (Path(data_dir).expanduser().resolve()) / "memory"
    with _lock:
        memory = _instances.get(root)
        if memory is None:
            if embeddings is None:
                from memory.embeddings import embeddings_from_env

                embeddings = embeddings_from_env()
            memory = _instances[root] = BlockMemory(root, embeddings)
        return memory
