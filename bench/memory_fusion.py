"""Which fusion of BM25 and vectors retrieves best: weighted vs RRF, and the vector weight.

    PYTHONPATH=. .venv/bin/python bench/memory_fusion.py                 # zh + en sets, 1000-turn conversation
    PYTHONPATH=. .venv/bin/python bench/memory_fusion.py --turns 0       # only the two paraphrase sets

Data: bench/data/memory_zh_retrieval.json and memory_en_retrieval.json (30 facts each, asked
later in other words), each fact followed by three same-language distractor turns from
bench/memory_dataset.py; and the generated long conversation (`--turns` turns, 40 planted facts).
Metrics: recall@3 and MRR@8 of the message stating the fact; for the long conversation, recall
when hits are packed best-first into `--context` tokens (what a model call could afford).
Every variant searches the same stored memory (one ingestion, MiniLM embeddings). Variants are
language-aware (vector weight × non-CJK share of the query) and use decay_floor 0.6 (the
previous default) unless they say otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from bench.memory_dataset import FILLER_EN, FILLER_ZH, SITES_EN, SITES_ZH, build
from memory import BlockMemory
from memory.bm25 import IncrementalBM25
from memory.text import search_terms, tokenize
from memory.tokens import count_tokens

DATA = Path(__file__).parent / "data"
VARIANTS: dict[str, dict[str, Any]] = {
    "BM25 only": {"vector_weight": 0.0},
    "vectors only": {"vector_weight": 1.0, "multilingual_embeddings": True},
    "weighted 0.7 vec, no language rule (seed)": {"vector_weight": 0.7, "multilingual_embeddings": True},
    "weighted 0.3 vec": {"vector_weight": 0.3},
    "weighted 0.5 vec": {"vector_weight": 0.5},
    "weighted 0.7 vec": {"vector_weight": 0.7},
    "weighted 0.3 vec, floor 0.9": {"vector_weight": 0.3, "decay_floor": 0.9},
    "weighted 0.5 vec, floor 0.8": {"vector_weight": 0.5, "decay_floor": 0.8},
    "weighted 0.5 vec, floor 0.9": {"vector_weight": 0.5, "decay_floor": 0.9},
    "weighted 0.5 vec, no decay": {"vector_weight": 0.5, "decay_floor": 1.0},
    "weighted 0.7 vec, floor 0.9": {"vector_weight": 0.7, "decay_floor": 0.9},
    "rrf 0.5 vec, no language rule": {"fusion": "rrf", "vector_weight": 0.5, "multilingual_embeddings": True},
    "rrf 0.5 vec": {"fusion": "rrf", "vector_weight": 0.5},
    "rrf 0.5 vec, floor 0.9": {"fusion": "rrf", "vector_weight": 0.5, "decay_floor": 0.9},
}


def paraphrase_set(lang: str, seed: int = 3) -> tuple[list[BaseMessage], list[tuple[str, str]]]:
    """Messages (fact + 3 distractor turns per fact, 10 minutes apart) and (evidence id, query)."""
    pairs = json.loads((DATA / f"memory_{lang}_retrieval.json").read_text(encoding="utf-8"))["pairs"]
    rng = random.Random(seed)
    fillers, sites = (FILLER_ZH, SITES_ZH) if lang == "zh" else (FILLER_EN, SITES_EN)
    ack = "好的，我记下了。" if lang == "zh" else "Noted."
    t = datetime(2025, 3, 1, 9, 0, 0)
    msgs: list[BaseMessage] = []
    gold: list[tuple[str, str]] = []

    def turn(user: str, answer: str, uid: str | None = None) -> None:
        nonlocal t
        kw = {"created_at": t.isoformat()}
        msgs.extend(
            [HumanMessage(user, id=uid, additional_kwargs=kw), AIMessage(answer, additional_kwargs=kw)]
        )
        t += timedelta(minutes=10)

    for i, pair in enumerate(pairs):
        turn(pair["fact"], ack, f"{lang}_fact_{i}")
        gold.append((f"{lang}_fact_{i}", pair["query"]))
        for _ in range(3):
            q, a = rng.choice(fillers)
            site = rng.choice(sites)
            turn(q.format(site=site), a.format(site=site))
    return msgs, gold


def _run_bigrams(text: str) -> list[str]:
    """jieba words plus the bigrams of every whole CJK run (the noisier alternative)."""
    runs = re.findall(r"[\u4e00-\u9fff]+", text)
    return tokenize(text) + [r[i : i + 2] for r in runs for i in range(len(r) - 1)]


def term_table(lang: str = "zh") -> None:
    """BM25 alone over one paraphrase set with three ways of making Chinese terms."""
    msgs, gold = paraphrase_set(lang)
    docs = [(str(msgs[i].id), f"{msgs[i].content} {msgs[i + 1].content}") for i in range(0, len(msgs), 2)]
    print(f"\nBM25 only, {lang} set: which terms\n| terms | R@3 | MRR |\n|---|---:|---:|")
    for name, fn in (("jieba words", tokenize), ("+ bigrams of 3+ char words (default)", search_terms),
                     ("+ bigrams of whole CJK runs", _run_bigrams)):  # fmt: skip
        index = IncrementalBM25()
        for i, (_, text) in enumerate(docs):
            index.add(i, fn(text))
        r3, rr = 0, 0.0
        for fid, query in gold:
            order = [docs[int(str(k))][0] for k, _ in index.top(fn(query), 8)]
            rank = order.index(fid) + 1 if fid in order else None
            r3 += rank is not None and rank <= 3
            rr += 1 / rank if rank else 0.0
        print(f"| {name} | {r3}/{len(gold)} | {rr / len(gold):.3f} |")


def packed(hits: list, budget: int) -> set[str]:
    used, ids = 0, set()
    for h in hits:
        cost = count_tokens(h.text)
        if used + cost <= budget:
            used += cost
            ids.update(h.message_ids)
    return ids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=1000, help="long-conversation turns (0 = skip)")
    ap.add_argument("--context", type=int, default=400)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from memory.embeddings import default_embeddings

    emb = default_embeddings()
    path = tempfile.mkdtemp(prefix="bench-fusion-")
    base = BlockMemory(path, emb)
    sets: dict[str, list[tuple[str, str]]] = {}
    for lang in ("zh", "en"):
        msgs, gold = paraphrase_set(lang)
        base.add_messages(f"set_{lang}", msgs)
        sets[lang] = gold
    planted = []
    if args.turns:
        conv, planted = build(args.turns)
        base.add_messages("conv", conv)
        base.flush("conv")
    cols = ["zh R@3", "zh MRR", "en R@3", "en MRR"] + ([f"conv@{args.context}tok"] if planted else [])
    print("| variant | " + " | ".join(cols) + " |\n|---|" + "---:|" * len(cols))
    for name, settings in VARIANTS.items():
        mem = BlockMemory(path, emb, **{"decay_floor": 0.6, **settings})
        row = []
        for lang, gold in sets.items():
            r3, rr = 0, 0.0
            for fid, query in gold:
                hits = mem.search(f"set_{lang}", query, k=8)
                rank = next((i for i, h in enumerate(hits, 1) if fid in h.message_ids), None)
                r3 += rank is not None and rank <= 3
                rr += 1 / rank if rank else 0.0
            row += [f"{r3}/{len(gold)}", f"{rr / len(gold):.3f}"]
        if planted:
            got = sum(p.message_id in packed(mem.search("conv", p.question), args.context) for p in planted)
            row.append(f"{got}/{len(planted)}")
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)
    term_table("zh")


if __name__ == "__main__":
    main()
