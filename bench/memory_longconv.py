"""Long-conversation benchmark: prompt tokens per call vs turns, and planted-fact recall.

    PYTHONPATH=. .venv/bin/python bench/memory_longconv.py --turns 1000 --budget 2000 --context 400

Tokens: at checkpoints, `disclose(budget)` against the full history (same tokenizer).
Recall: for each planted fact, the evidence message must be inside the retrieved context packed
up to `--context` tokens, for BlockMemory.search, a last-N window and plain BM25 over turns.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from rank_bm25 import BM25Okapi

from bench.memory_dataset import build
from memory import BlockMemory
from memory.metadata import message_line
from memory.text import search_terms, tokenize
from memory.tokens import count_messages_tokens, count_tokens

SYSTEM = "你是光伏投资测算助手，回答要引用历史数据。"


def by_turn(messages: list[BaseMessage]) -> list[list[BaseMessage]]:
    groups: dict[int, list[BaseMessage]] = defaultdict(list)
    for m in messages:
        groups[int(str(m.id).split("_")[0][1:])].append(m)
    return [groups[t] for t in sorted(groups)]


def pack(items: list[tuple[list[str], str]], budget: int) -> set[str]:
    """Ids covered by taking items best first while their text fits the budget."""
    used, ids = 0, set()
    for item_ids, text in items:
        cost = count_tokens(text)
        if used + cost > budget:
            continue
        used += cost
        ids.update(item_ids)
    return ids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--context", type=int, default=400, help="tokens of retrieved context per question")
    ap.add_argument("--embeddings", choices=["minilm", "hash"], default="minilm")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    if args.embeddings == "hash":
        from langchain_core.embeddings import DeterministicFakeEmbedding

        emb = DeterministicFakeEmbedding(size=384)
    else:
        from memory.embeddings import default_embeddings

        emb = default_embeddings()
    messages, planted = build(args.turns)
    path = tempfile.mkdtemp(prefix="bench-longconv-")
    mem = BlockMemory(path, emb)
    ns = "pv_calc_bench_c1"
    turns = by_turn(messages)
    checkpoints = {10, 50, 100, 250, 500, 750, args.turns}
    history: list[BaseMessage] = []
    ingest = 0.0
    print("| turn | disclosed tokens | full-history tokens |\n|---:|---:|---:|")
    for i, turn in enumerate(turns, 1):
        if i in checkpoints:
            window = mem.disclose(ns, args.budget, SYSTEM, turn[0])
            full = count_messages_tokens([SystemMessage(SYSTEM), *history, turn[0]])
            print(f"| {i} | {count_messages_tokens(window)} | {full} |")
        t0 = time.perf_counter()
        mem.add_messages(ns, turn)
        ingest += time.perf_counter() - t0
        history += turn
    mem.flush(ns)
    stored = mem.messages(ns)
    print(
        f"\ningested {len(messages)} messages in {ingest:.1f} s ({len(messages) / ingest:.0f} msg/s), {len(mem.list_blocks(ns))} blocks"
    )

    stored_turns = by_turn(stored)
    turn_docs = [(" ".join(str(m.content) for m in t), [str(m.id) for m in t]) for t in stored_turns]
    bm25_words = BM25Okapi([tokenize(d) for d, _ in turn_docs])
    last_n: list[tuple[list[str], str]] = [([str(m.id)], message_line(m)) for m in reversed(stored)]
    variants = {
        "BlockMemory weighted (default)": mem,
        "BlockMemory rrf": BlockMemory(path, emb, fusion="rrf"),
        "BlockMemory weighted, no decay": BlockMemory(path, emb, decay_floor=1.0),
    }
    results: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    latencies = []
    for p in planted:
        for name, m in variants.items():
            t0 = time.perf_counter()
            hits = m.search(ns, p.question)
            if m is mem:
                latencies.append(time.perf_counter() - t0)
            results[name][p.lang].append(
                p.message_id in pack([(h.message_ids, h.text) for h in hits], args.context)
            )
        results["last-N window"][p.lang].append(p.message_id in pack(last_n, args.context))
        scores = bm25_words.get_scores(tokenize(p.question))
        order = sorted(range(len(turn_docs)), key=lambda i: -scores[i])[:20]
        results["plain BM25 over turns"][p.lang].append(
            p.message_id
            in pack(
                [(turn_docs[i][1], "\n".join(message_line(m) for m in stored_turns[i])) for i in order],
                args.context,
            )
        )
    print(f"\nrecall of {len(planted)} planted facts with {args.context} tokens of retrieved context")
    print("| method | zh | en | all |\n|---|---:|---:|---:|")
    for name, by_lang in results.items():
        zh, en = by_lang["zh"], by_lang["en"]
        print(
            f"| {name} | {sum(zh)}/{len(zh)} | {sum(en)}/{len(en)} | {(sum(zh) + sum(en)) / (len(zh) + len(en)):.2f} |"
        )
    print(f"\nsearch p50 {statistics.median(latencies) * 1000:.1f} ms over {len(latencies)} queries")
    _ = (HumanMessage, search_terms)


if __name__ == "__main__":
    main()
