"""The closure vectors of a namespace in one matrix: each message's cosine is its closure's.

A block's vector is the mean of its closures', so it barely separates the closure that answers a
question from the small talk around it. Each closure's vector is computed at ingestion anyway
(chunking compares them); it is kept (the `pvecs` column) and held here, unit-normalised, in one
growing float32 matrix; a search gathers the rows of its candidate blocks. (Scoring every closure
and adding the messages of the 64, 128 or 256 nearest as candidates changed no recall on the dev
split, so candidates stay as they were.)

Rewriting a block (the newest block grows) retires its rows and appends new ones; the matrix is
compacted when retired rows outnumber live ones. Memory: 1.5 kB per closure at 384 dimensions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ClosureVectors"]


class ClosureVectors:
    """Unit-normalised closure vectors by block, with the message span of each closure."""

    def __init__(self) -> None:
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.count = 0
        self.owner: list[tuple[str, int] | None] = []  # row -> (block id, closure index)
        self.rows: dict[str, list[int]] = {}
        self.sizes: dict[str, list[int]] = {}
        self.live = 0

    def add(self, block_id: str, flat: bytes | list[float] | None, sizes: list[int]) -> None:
        """Index a block's closures (`flat`: their vectors one after another); replaces older ones."""
        self.remove(block_id)
        if flat is None or not sizes:
            return
        vecs = np.asarray(
            np.frombuffer(flat, dtype=np.float32) if isinstance(flat, bytes) else flat, dtype=np.float32
        )
        if vecs.size == 0 or vecs.size % len(sizes):
            return
        vecs = vecs.reshape(len(sizes), -1)
        if self.count and vecs.shape[1] != self.matrix.shape[1]:
            return  # another embedder's dimension: the block keeps its block cosine only
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        if self.count + len(vecs) > len(self.matrix) or self.matrix.shape[1] != vecs.shape[1]:
            grown = np.zeros((max(64, 2 * (self.count + len(vecs))), vecs.shape[1]), dtype=np.float32)
            if self.count:
                grown[: self.count] = self.matrix[: self.count]
            self.matrix = grown
        rows = list(range(self.count, self.count + len(vecs)))
        self.matrix[self.count : self.count + len(vecs)] = vecs
        self.count += len(vecs)
        self.owner += [(block_id, i) for i in range(len(vecs))]
        self.rows[block_id], self.sizes[block_id] = rows, list(sizes)
        self.live += len(rows)

    def remove(self, block_id: str) -> None:
        """Forget a block's closures."""
        rows = self.rows.pop(block_id, None)
        self.sizes.pop(block_id, None)
        if not rows:
            return
        for r in rows:
            self.owner[r] = None
        self.matrix[rows] = 0.0
        self.live -= len(rows)
        if self.count - self.live > max(self.live, 256):
            self._compact()

    def _compact(self) -> None:
        keep = [r for r in range(self.count) if self.owner[r] is not None]
        self.matrix = self.matrix[keep].copy()
        self.owner = [self.owner[r] for r in keep]
        self.count = len(keep)
        self.rows = {}
        for r, own in enumerate(self.owner):
            assert own is not None
            self.rows.setdefault(own[0], []).append(r)

    def per_message(self, block_ids: list[str], query: np.ndarray) -> dict[str, list[float]]:
        """Per block, each message's closure cosine with `query` (blocks without closure vectors absent)."""
        found = [b for b in block_ids if b in self.rows]
        if not found or self.matrix.shape[1] != len(query):
            return {}
        rows = [r for b in found for r in self.rows[b]]
        norm = float(np.linalg.norm(query)) or 1.0
        values = (self.matrix[rows] @ (query.astype(np.float32) / norm)).tolist()
        out: dict[str, list[float]] = {}
        start = 0
        for b in found:
            sizes = self.sizes[b]
            out[b] = [
                c for c, n in zip(values[start : start + len(sizes)], sizes, strict=True) for _ in range(n)
            ]
            start += len(sizes)
        return out
