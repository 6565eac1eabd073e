"""The packaged MiniLM on ONNX Runtime vs torch: CPU and wall time per query and per document.

    PYTHONPATH=. .venv/bin/python bench/embedder_backends.py [--queries 200] [--docs 1000]

CPU time (time.process_time, all threads of this process) is the number that survives a shared
machine; wall time shows what a caller waits. torch runs with 1 intra-op thread and with its
default (one per core); ONNX Runtime always uses 1 intra-op thread per call (memory/_onnx_minilm.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np


def main() -> None:
    """Print one row per backend."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--docs", type=int, default=1000)
    args = ap.parse_args()
    import torch

    from memory.embeddings import MiniLMEmbeddings

    default_threads = torch.get_num_threads()
    queries = [f"Riverside solar tariff payback {i}" for i in range(args.queries)]
    docs = [
        f"Riverside: solar roof inverter tariff payback loan module {i}? = {i * 7}" for i in range(args.docs)
    ]
    print(f"load average {Path('/proc/loadavg').read_text().split()[0]}, {os.cpu_count()} CPUs")
    print(
        "| backend | query CPU p50 ms | query wall p50 ms | doc CPU ms | docs/s (wall) | min cosine vs torch |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    reference = None
    for backend, threads in (("torch", default_threads), ("torch", 1), ("onnx", 1)):
        torch.set_num_threads(threads)
        emb = MiniLMEmbeddings(backend=backend)
        emb.embed_query("warm up")
        cpu, wall = [], []
        for q in queries:
            c, w = time.process_time(), time.perf_counter()
            emb.embed_query(q)
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
        c, w = time.process_time(), time.perf_counter()
        vectors = np.array(emb.embed_documents(docs))
        doc_cpu, doc_wall = time.process_time() - c, time.perf_counter() - w
        reference = vectors if reference is None else reference
        cosine = float((vectors * reference).sum(axis=1).min())
        print(
            f"| {backend}, {threads} thread(s) | {1000 * statistics.median(cpu):.2f} | "
            f"{1000 * statistics.median(wall):.2f} | {1000 * doc_cpu / len(docs):.2f} | "
            f"{len(docs) / doc_wall:.0f} | {cosine:.5f} |",
            flush=True,
        )
    # Would batching the queries of concurrent turns pay? CPU per query, one at a time vs in batches.
    emb = MiniLMEmbeddings(backend="onnx")
    for size in (1, 4, 8, 16):
        c = time.process_time()
        for i in range(0, len(queries), size):
            emb.embed_documents(queries[i : i + size])
        print(
            f"onnx, queries in batches of {size}: {1000 * (time.process_time() - c) / len(queries):.2f} ms CPU per query"
        )
    print(f"load average {Path('/proc/loadavg').read_text().split()[0]}")


if __name__ == "__main__":
    main()
