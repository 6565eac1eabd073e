"""Chroma query time: one shared collection with a namespace `where` filter vs no filter.

    PYTHONPATH=. .venv/bin/python bench/memory_chroma_filter.py --size 10000

Why `memory.vectors.VectorIndex` keeps one collection per namespace: the same 384-d random unit
vectors, 64 nearest neighbours, p50 over 20 queries.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10000)
    args = ap.parse_args()
    from memory.vectors import chroma_client

    client = chroma_client(Path(tempfile.mkdtemp(prefix="bench-chroma-")))
    col = client.get_or_create_collection("bench", metadata={"hnsw:space": "cosine"})
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(args.size, 384))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    step = 5000
    for s in range(0, args.size, step):
        ids = [f"b{i}" for i in range(s, min(s + step, args.size))]
        col.upsert(ids=ids, embeddings=vecs[s : s + step].tolist(), metadatas=[{"ns": "ns"} for _ in ids])
    print("| where | p50 ms |\n|---|---:|")
    for where in (None, {"ns": "ns"}, {"ns": {"$in": ["ns", "longterm::u"]}}):
        times = []
        for _ in range(20):
            q = rng.normal(size=384)
            t = time.perf_counter()
            col.query(query_embeddings=[(q / np.linalg.norm(q)).tolist()], n_results=64, where=where)
            times.append((time.perf_counter() - t) * 1000)
        print(f"| {where} | {statistics.median(times):.1f} |")


if __name__ == "__main__":
    main()
