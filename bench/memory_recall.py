"""Recall at equal tokens on generated long conversations: plangraph vs plain BM25 baselines.

    PYTHONPATH=. .venv/bin/python bench/memory_recall.py --split test --count 6
    PYTHONPATH=. .venv/bin/python bench/memory_recall.py --split dev --count 6 \
        --variant default --variant window_weight=0 --variant block_weight=0,time_boost=0

Data: `bench/memory_convgen.py` (≈ 17–19k tokens per conversation, ≈ 33 questions whose evidence
is 1–3 turns: single-event, multi-hop, multi-session and temporal). Every conversation is ingested
through the public API (`BlockMemory(path)`, `add_messages(ns, messages)` per session, messages
with ids and `created_at`) with the packaged MiniLM; `search(ns, question, k)` → hits.

Method (as in issue 15): for each question, BM25 over turns (one message = one turn) ranks the
messages; its cost at k = 5, 10, 20 (tokens of the top-k turns' `role: content` lines) is the
budget. Each method's results are taken in rank order while their text fits that budget (the
first that does not fit ends the packing); recall = share of the evidence messages inside,
averaged over questions. BM25 over 5-turn windows ranks every window of 5 consecutive turns
(stride 1; a window costs only its turns not already taken). The baselines' BM25 tokens are
`baseline_terms` (jieba words + bigrams of 3+ character CJK words, English words without stop
words), fixed so that budgets do not move with the memory's tokenisation.
Rows "…, k hits" pack only the first k hits (a caller that asks `search` for the baseline's k
rather than for more than the budget can hold).

`--ingest a=1,b=2` gives the ingesting instance (and every variant) those settings, e.g.
`message_vectors=False` for the stores as round 4 ingested them; with `--cache` each such setting
keeps its own stores.

`--generator 1` reproduces the first generator (one wording per event turn, no `paraphrase`
questions); the default, 2, varies the wording and adds `paraphrase` questions. `--generator 3`
takes `bench/memory_convgen3.py`, written apart from the memory's tuning (also `update` and
`mixed` questions).
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage
from rank_bm25 import BM25Okapi

from bench import memory_convgen3
from bench.memory_convgen import Conversation, conversations
from memory import BlockMemory
from memory.metadata import message_line
from memory.text import cjk_ratio, search_terms, tokenize
from memory.tokens import count_tokens

KS = (5, 10, 20, 50, 70, 90)


def baseline_terms(text: str) -> list[str]:
    """The baselines' BM25 terms, fixed: jieba words plus the bigrams of CJK words of 3+ characters.

    This is what `memory.text.search_terms` was when the baselines were first measured; kept fixed
    so that budgets and baseline rows do not move when the memory's own tokenisation changes
    (`--baseline-terms memory` gives the baselines the memory's current terms instead).
    """
    terms = tokenize(text)
    return terms + [t[i : i + 2] for t in terms if len(t) >= 3 and cjk_ratio(t) == 1.0
                    for i in range(len(t) - 1)]  # fmt: skip


class QueryCache(Embeddings):
    """The packaged embedder, with query vectors cached across variants (documents pass through)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.cache: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (not cached)."""
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed a query once."""
        if text not in self.cache:
            self.cache[text] = self.inner.embed_query(text)
        return self.cache[text]


def pack(items: Iterable[tuple[list[str], str]], budget: int) -> set[str]:
    """Ids of the items taken in order while their text fits `budget` tokens."""
    used, ids = 0, set()
    for item_ids, text in items:
        new = [i for i in item_ids if i not in ids]
        if not new:
            continue
        cost = count_tokens(text)
        if used + cost > budget:
            break
        used += cost
        ids.update(new)
    return ids


def sessions(messages: list[BaseMessage]) -> list[list[BaseMessage]]:
    """Messages grouped by calendar day of `created_at` (one session per day here)."""
    out: list[list[BaseMessage]] = []
    for m in messages:
        day = datetime.fromisoformat(m.additional_kwargs["created_at"]).date()
        if out and datetime.fromisoformat(out[-1][-1].additional_kwargs["created_at"]).date() == day:
            out[-1].append(m)
        else:
            out.append([m])
    return out


def ingest_rate(messages: float, seconds: float) -> str:
    """Ingestion throughput for the summary line; stores reused from `--cache` ingested nothing."""
    if not messages or seconds <= 0:
        return "ingest not timed (stores reused from --cache)"
    return f"ingest {messages / seconds:.0f} msg/s over {messages:.0f} messages"


def window_pool(ks: Iterable[int]) -> int:
    """How many best windows the 5-turn baseline packs from: 100 up to k = 90 (as before), else 2·k."""
    top = max(ks)
    return 100 if top <= 90 else 2 * top


def parse_ks(text: str) -> tuple[int, ...]:
    """`--ks 5,10,120`: the baseline's k values whose token cost is a budget (ascending, distinct)."""
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise SystemExit(
            f"--ks takes comma-separated positive integers, e.g. 5,10,20,90,120; got {text!r}"
        ) from None
    if not ks or ks[0] <= 0:
        raise SystemExit(f"--ks takes comma-separated positive integers, e.g. 5,10,20,90,120; got {text!r}")
    return ks


def parse_variant(text: str) -> dict[str, float | int | str | bool]:
    """`default` or `name=value,name=value` (MemorySettings fields)."""
    if text == "default":
        return {}
    out: dict[str, float | int | str | bool] = {}
    for part in text.split(","):
        name, _, raw = part.partition("=")
        value: float | int | str | bool = raw
        for cast in (int, float):
            try:
                value = cast(raw)
                break
            except ValueError:
                pass
        if raw in ("True", "False"):
            value = raw == "True"
        out[name.strip()] = value
    return out


def run(
    conv: Conversation,
    emb: Embeddings,
    variants: list[str],
    hits_k: int,
    cache: str = "",
    show_misses: bool = False,
    baseline: str = "fixed",
    misses_k: int = max(KS),
    ingest: str = "default",
    ks: tuple[int, ...] = KS,
) -> dict:
    """Recall per method and k for one conversation, plus ingestion and search times.

    With `cache`, the ingested store is kept under it and reused by later runs (search-time
    settings only differ between variants; ingestion uses `ingest`, a variant string, and every
    variant's instance gets those settings too unless it overrides them).
    """
    ns = f"chat_{conv.lang}{conv.seed}"
    path = tempfile.mkdtemp(prefix="bench-recall-")
    if cache:
        suffix = "" if ingest == "default" else "_" + re.sub(r"[^A-Za-z0-9.=]+", "-", ingest)
        path = str(Path(cache) / f"{ns}_v{conv.version}{suffix}")
    done = Path(path) / "ingested"
    base = parse_variant(ingest)
    mem = BlockMemory(path, emb, **base)
    ingested = ingest_secs = 0.0  # a store reused from the cache ingests nothing: no rate
    if not done.exists():
        t0 = time.perf_counter()
        for session in sessions(conv.messages):
            mem.add_messages(ns, session)
        mem.flush(ns)
        ingest_secs, ingested = time.perf_counter() - t0, len(conv.messages)
        if cache:
            done.write_text("ok")
    lines = {str(m.id): message_line(m) for m in conv.messages}
    ids = [str(m.id) for m in conv.messages]
    terms_of = search_terms if baseline == "memory" else baseline_terms
    turns = BM25Okapi([terms_of(str(m.name) + " " + str(m.content)) for m in conv.messages])
    win_ids = [ids[i : i + 5] for i in range(len(ids) - 4)]
    windows = BM25Okapi([[t for i in w for t in terms_of(lines[i])] for w in win_ids])
    mems = {v: BlockMemory(path, emb, **{**base, **parse_variant(v)}) for v in variants}
    out: dict = defaultdict(lambda: defaultdict(list))
    latency: list[float] = []
    for q in conv.questions:
        terms = terms_of(q.text)
        scores = turns.get_scores(terms)
        order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))
        budgets = {k: sum(count_tokens(lines[ids[i]]) for i in order[:k]) for k in ks}
        by_turn = [([ids[i]], lines[ids[i]]) for i in order[: max(200, max(ks))]]
        wscores = windows.get_scores(terms)
        # 100 windows fill every budget up to k = 90 (the tables before --ks); more for larger k
        worder = sorted(range(len(win_ids)), key=lambda i: (-wscores[i], i))[: window_pool(ks)]
        by_window = [(win_ids[i], "\n".join(lines[j] for j in win_ids[i])) for i in worder]
        ranked: dict[str, list[tuple[list[str], str]]] = {
            "BM25 over turns": by_turn,
            "BM25 over 5-turn windows": [],
        }
        for v, m in mems.items():
            t1 = time.perf_counter()
            hits = m.search(ns, q.text, hits_k)
            latency.append(time.perf_counter() - t1)
            ranked[f"plangraph {v}"] = [(h.message_ids, h.text) for h in hits]
            ranked[f"plangraph {v}, k hits"] = ranked[f"plangraph {v}"]
        for k, budget in budgets.items():
            window_got: set[str] = set()
            for name, items in ranked.items():
                if name == "BM25 over 5-turn windows":
                    # a window costs only its turns not already taken
                    got: set[str] = set()
                    used = 0
                    for w_ids, _ in by_window:
                        new = [i for i in w_ids if i not in got]
                        cost = count_tokens("\n".join(lines[i] for i in new)) if new else 0
                        if used + cost > budget:
                            break
                        used += cost
                        got.update(new)
                    window_got = got
                elif name.endswith(", k hits"):
                    got = pack(items[:k], budget)  # a caller asking search for the baseline's k
                else:
                    got = pack(items, budget)
                recall = sum(e in got for e in q.evidence) / len(q.evidence)
                out[(name, k)][q.kind].append(recall)
                if show_misses and k == misses_k and recall < 1 and name == f"plangraph {variants[0]}":
                    at = {i: r for r, (item_ids, _) in enumerate(items) for i in item_ids}
                    print(f"MISS [{q.kind}] k={k} budget={budget} {q.text}")
                    for e in q.evidence:
                        win = "win" if e in window_got else "---"
                        print(
                            f"    {'in ' if e in got else 'OUT'} {win} rank {at.get(e, '-')}: {lines[e][:110]}"
                        )
                    for r, (_, text) in enumerate(items[:6]):
                        print(f"      #{r} {text[:100]}")
            out[("budget", k)]["all"].append(budget)
    for m in mems.values():
        m.close()
    mem.close()
    return {"recall": out, "ingest": (ingested, ingest_secs), "latency": latency}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    ap.add_argument("--count", type=int, default=6, help="conversations per language")
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--variant", action="append", help="'default' or MemorySettings overrides a=1,b=2")
    ap.add_argument("--hits", type=int, default=150, help="k asked of search (packing stops at the budget)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", default="", help="keep ingested stores here and reuse them")
    ap.add_argument("--misses", action="store_true", help="print the first variant's misses at --misses-k")
    ap.add_argument(
        "--ks",
        type=parse_ks,
        default=KS,
        help="budgets: k of BM25 over turns whose token cost is the budget (default 5,10,20,50,70,90)",
    )
    ap.add_argument(
        "--misses-k",
        type=int,
        default=0,
        help="budget k of the printed misses (one of --ks; default the largest)",
    )
    ap.add_argument(
        "--baseline-terms",
        choices=["fixed", "memory"],
        default="fixed",
        help="baselines' BM25 terms: fixed (bench.memory_recall.baseline_terms) or the memory's",
    )
    ap.add_argument(
        "--generator",
        type=int,
        default=2,
        help="memory_convgen version (1 = the first one); 3 = bench/memory_convgen3.py (independent)",
    )
    ap.add_argument(
        "--ingest", default="default", help="settings of the ingesting instance (a variant string)"
    )
    ap.add_argument("--kinds-at", type=int, default=10, help="k of the per-kind columns (one of --ks)")
    args = ap.parse_args()
    ks = args.ks
    misses_k = args.misses_k or max(ks)
    for name, value in (("--misses-k", misses_k), ("--kinds-at", args.kinds_at)):
        if value not in ks:
            ap.error(f"{name} {value} is not one of --ks {','.join(map(str, ks))}")
    import torch

    torch.set_num_threads(args.threads)
    from memory.embeddings import default_embeddings

    emb = QueryCache(default_embeddings())
    variants = args.variant or ["default"]
    for lang in args.langs.split(","):
        total: dict = defaultdict(lambda: defaultdict(list))
        msgs = secs = 0.0
        lat: list[float] = []
        if args.generator == 3:
            convs = memory_convgen3.conversations(lang, args.split, args.count)
        else:
            convs = conversations(lang, args.split, args.count, args.generator)
        for conv in convs:
            res = run(
                conv,
                emb,
                variants,
                args.hits,
                args.cache,
                args.misses,
                args.baseline_terms,
                misses_k,
                args.ingest,
                ks,
            )
            for key, by_kind in res["recall"].items():
                for kind, values in by_kind.items():
                    total[key][kind] += values
            msgs += res["ingest"][0]
            secs += res["ingest"][1]
            lat += res["latency"]
        nq = sum(len(c.questions) for c in convs)
        budgets = " / ".join(f"{statistics.mean(total[('budget', k)]['all']):.0f}" for k in ks)
        print(f"\n{lang} {args.split} (generator v{args.generator}, ingest {args.ingest}): {len(convs)} conversations, {nq} questions, budgets {budgets} tokens "
              f"(k = {', '.join(map(str, ks))}); {ingest_rate(msgs, secs)}; "
              f"search p50 {statistics.median(lat) * 1000:.1f} ms")  # fmt: skip
        kinds = sorted({kind for (name, _), d in total.items() if name != "budget" for kind in d})
        at = args.kinds_at
        print(
            f"| method | {' | '.join(f'k={k}' for k in ks)} | {' | '.join(f'{x} @k={at}' for x in kinds)} |"
        )
        print("|---|" + "---:|" * (len(ks) + len(kinds)))
        names = list(dict.fromkeys(name for name, _ in total if name != "budget"))
        for name in names:
            cells = [statistics.mean([v for vs in total[(name, k)].values() for v in vs]) for k in ks]
            per = [
                statistics.mean(total[(name, at)][x]) if total[(name, at)][x] else float("nan") for x in kinds
            ]
            print(f"| {name} | {' | '.join(f'{c:.3f}' for c in cells)} | {' | '.join(f'{c:.3f}' for c in per)} |",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
