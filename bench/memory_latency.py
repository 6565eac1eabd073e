"""Search latency (p50/p95, including query embedding) and ingestion throughput by corpus size.

    PYTHONPATH=. .venv/bin/python bench/memory_latency.py --sizes 1000,10000
    PYTHONPATH=. .venv/bin/python bench/memory_latency.py --sizes 100000 --embeddings hash

Each block is one Q&A pair (pairs are 6 minutes apart, so every pair closes a block), ingested
with `add_messages` in batches of `--batch` messages (one embedding batch per call). The queries
are distinct texts, so none is answered by the query-vector cache; the last column is MiniLM's
time for one English query alone, and "search CPU" the process CPU time of one search (both
threads; on a shared machine it moves less with other load than wall time). `--store DIR` keeps the ingested store and reuses it (the
ingestion column is then "–"); `--profile FILE` writes a cProfile of the default searches.
"""

from __future__ import annotations

import argparse
import cProfile
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory

EN = "solar roof inverter tariff payback loan module panel battery storage grid meter survey budget capex irr".split()
ZH = "光伏 屋顶 逆变器 电价 回收期 贷款 组件 储能 电网 电表 勘察 预算 造价 收益率 并网 补贴".split()
SITES = ["杭州", "苏州", "宁波", "Riverside", "Hillcrest", "Lakeview", "合肥", "Oakridge"]


def pair(rng: random.Random, i: int, t: datetime) -> list:
    words = rng.sample(ZH, 4) if i % 2 else rng.sample(EN, 4)
    site = rng.choice(SITES)
    q = f"{site} {' '.join(words)} {rng.randint(1, 99999)}?"
    a = f"{site}: {' '.join(rng.sample(words, 2))} = {rng.randint(1, 9999)}"
    kw = {"created_at": t.isoformat()}
    return [HumanMessage(q, additional_kwargs=kw), AIMessage(a, additional_kwargs=kw)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--variant",
        action="append",
        help="also time search with these settings on the same store: 'a=1,b=2' (MemorySettings)",
    )
    ap.add_argument("--ingest", default="default", help="settings of the ingesting instance: 'a=1,b=2'")
    ap.add_argument("--store", default="",
                    help="keep the ingested store in DIR/<size> and reuse it (ingestion then not timed)")  # fmt: skip
    ap.add_argument("--profile", default="", help="cProfile the default searches into this file (pstats)")
    ap.add_argument("--embeddings", choices=["minilm", "hash"], default="minilm",
                    help="hash: 384-d DeterministicFakeEmbedding, to time 100k blocks without MiniLM")  # fmt: skip
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

    from memory.embeddings import default_embeddings

    emb: Embeddings = (
        default_embeddings() if args.embeddings == "minilm" else DeterministicFakeEmbedding(size=384)
    )
    emb.embed_query("warm up")
    from bench.memory_recall import parse_variant

    print(
        "| blocks | settings | ingest msg/s | search p50 ms | p95 ms | en p50 | zh p50 | query embedding p50 "
        "| search CPU p50 ms |\n"
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for size in [int(s) for s in args.sizes.split(",")]:
        rng = random.Random(size)
        path = tempfile.mkdtemp(prefix="bench-latency-")
        if args.store:
            path = str(Path(args.store) / f"{size}_{args.embeddings}_{args.ingest}")
        done = Path(path) / "ingested"
        base = parse_variant(args.ingest)
        mem = BlockMemory(path, emb, **base)
        start = datetime(2025, 1, 1)
        msgs = [m for i in range(size) for m in pair(rng, i, start + timedelta(minutes=6 * i))]
        ingest = "–"  # a reused store: not timed
        if not done.exists():
            t0 = time.perf_counter()
            for b in range(0, len(msgs), args.batch):
                mem.add_messages("ns", msgs[b : b + args.batch])
            mem.flush("ns")
            ingest = f"{len(msgs) / (time.perf_counter() - t0):.0f}"
            if args.store:
                done.write_text("ok")
        blocks = len(mem.list_blocks("ns"))
        queries: list[tuple[str, str]] = []
        while len(queries) < args.queries:  # distinct texts: no search is served by the query cache
            lang = "zh" if len(queries) % 2 else "en"
            words = rng.sample(ZH if lang == "zh" else EN, 2)
            query = (lang, f"{rng.choice(SITES)} {''.join(words) if lang == 'zh' else ' '.join(words)}")
            if query not in queries:
                queries.append(query)
        embed = []
        for _ in range(20):
            t2 = time.perf_counter()
            emb.embed_query(f"{rng.choice(SITES)} {' '.join(rng.sample(EN, 2))}")
            embed.append((time.perf_counter() - t2) * 1000)
        for variant in ["default", *(args.variant or [])]:
            searcher = (
                mem if variant == "default" else BlockMemory(path, emb, **{**base, **parse_variant(variant)})
            )
            searcher.search("ns", "warm up")  # a reopened store loads its state on first use: not timed
            lat: dict[str, list[float]] = {"en": [], "zh": []}
            cpu: list[float] = []  # process CPU time of a search (both threads): less swayed by other load
            profile = cProfile.Profile() if args.profile and variant == "default" else None
            for lang, query in queries:
                t1, c1 = time.perf_counter(), time.process_time()
                if profile is not None:
                    profile.enable()
                searcher.search("ns", query)
                if profile is not None:
                    profile.disable()
                lat[lang].append((time.perf_counter() - t1) * 1000)
                cpu.append((time.process_time() - c1) * 1000)
            if profile is not None:
                profile.dump_stats(args.profile)
            both = sorted(lat["en"] + lat["zh"])
            p95 = both[int(0.95 * (len(both) - 1))]
            print(
                f"| {blocks} | {args.ingest}; {variant} | {ingest} | {statistics.median(both):.1f} | {p95:.1f} | "
                f"{statistics.median(lat['en']):.1f} | {statistics.median(lat['zh']):.1f} | "
                f"{statistics.median(embed):.1f} | {statistics.median(cpu):.1f} |",
                flush=True,
            )
            if searcher is not mem:
                searcher.close()
        mem.close()


if __name__ == "__main__":
    main()
