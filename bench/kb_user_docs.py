"""Users' documents in the knowledge base: indexing throughput (pages/s) and search p50 at N chunks.

Run (numbers in docs/knowledge-base.md, with the load average beside them):
    HF_HUB_OFFLINE=1 ANONYMIZED_TELEMETRY=False .venv/bin/python -m bench.kb_user_docs --part pdf \
        --pdfs 4 --pages 10                         # packaged MiniLM
    HF_HUB_OFFLINE=1 ANONYMIZED_TELEMETRY=False .venv/bin/python -m bench.kb_user_docs --part search \
        --chunks 10500 --embeddings hash            # + MiniLM query-embedding time, measured apart

1. Throughput: `--pdfs` PDFs of `--pages` pages (≈1,500 characters each, made with fpdf2) added
   through `UploadStore.add` (load with PyPDFLoader, split, embed, write) — pages per second.
2. Search: text files adding up to `--chunks` chunks, then `--queries` questions through the
   user's view of the index (BM25 over every passage + Chroma vectors); p50 / p95 per search, plus
   the one-off ranker rebuild after the documents changed.
The text is sentences of the shipped notes with varying numbers and place names (not the queries).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from memory.embeddings import make_embeddings
from tools.kb.corpus import SHIPPED_KB_DIR
from tools.kb.index import KnowledgeIndex

PLACES = ["Hangzhou", "Ningbo", "Wenzhou", "Jiaxing", "Huzhou", "Shaoxing", "Jinhua", "Taizhou"]
QUESTIONS = [
    "分布式光伏并网流程是怎样的",
    "一个绿证对应多少电量",
    "组件多久清洗一次",
    "余电上网怎么结算",
    "工商业光伏还有补贴吗",
    "分时电价的峰谷时段",
    "储能补贴政策",
    "屋顶荷载要求",
]


def sentences() -> list[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SHIPPED_KB_DIR.glob("*.md")))
    return [s.strip() for s in re.findall(r"[^。\n]+。", text) if len(s.strip()) > 12]


def latin_page(rng: random.Random, n: int) -> str:
    words = "grid connection tariff subsidy inverter module storage rooftop meter settlement policy".split()
    return " ".join(
        f"{rng.choice(PLACES)} {rng.choice(words)} {rng.randint(1, 999)} kWh" for _ in range(n // 20)
    )


def make_pdfs(folder: Path, count: int, pages: int, rng: random.Random) -> list[Path]:
    from fpdf import FPDF

    files = []
    for i in range(count):
        pdf = FPDF()
        pdf.set_font("Helvetica", size=10)
        for _ in range(pages):
            pdf.add_page()
            pdf.multi_cell(0, 5, latin_page(rng, 1500))
        path = folder / f"handbook-{i:03d}.pdf"
        pdf.output(str(path))
        files.append(path)
    return files


def make_texts(folder: Path, chunks: int, rng: random.Random, pool: list[str]) -> list[Path]:
    per_file = 200  # chunks of ≈600 characters each
    files = []
    for i in range((chunks + per_file - 1) // per_file):
        paragraphs = []
        for _ in range(min(per_file, chunks - i * per_file)):
            body = "".join(rng.choice(pool) for _ in range(8))
            paragraphs.append(re.sub(r"\d+", lambda _: str(rng.randint(1, 500)), body)[:560])
        path = folder / f"notes-{i:03d}.txt"
        path.write_text("\n\n".join(paragraphs), encoding="utf-8")
        files.append(path)
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdfs", type=int, default=10)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--embeddings", default="minilm", choices=["minilm", "hash"])
    parser.add_argument("--part", default="both", choices=["pdf", "search", "both"])
    args = parser.parse_args()
    rng = random.Random(7)
    embeddings = make_embeddings(args.embeddings, "", "", "")
    embeddings.embed_query("预热")  # model load is not indexing time
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pdf").mkdir()
        (root / "txt").mkdir()
        index = KnowledgeIndex(root / "data", [SHIPPED_KB_DIR], embeddings).for_user("bench")
        index.refresh()
        if args.part in ("pdf", "both"):
            pdfs = make_pdfs(root / "pdf", args.pdfs, args.pages, rng)
            warm = make_pdfs(root, 1, 1, rng)[0]  # imports of the loaders are not indexing time
            index.uploads.add(warm, "warm-up")
            start = time.perf_counter()
            for path in pdfs:
                index.uploads.add(path, "bench")
            took = time.perf_counter() - start
            pages = args.pdfs * args.pages
            chunks = sum(d.chunks for d in index.uploads.documents(["bench"]))
            print(
                f"pdf: {pages} pages ({chunks} chunks) in {took:.1f}s = {pages / took:.2f} pages/s "
                f"(embeddings={args.embeddings})"
            )
            print(f"loadavg: {open('/proc/loadavg').read().strip()}  cpus: {os.cpu_count()}")
        if args.part == "pdf":
            return

        texts = make_texts(root / "txt", args.chunks, rng, sentences())
        start = time.perf_counter()
        for path in texts:
            index.uploads.add(path, "bench")
        took = time.perf_counter() - start
        total = len(index.uploads.passages(index.owners))
        print(f"txt: {total} chunks in the user's documents; adding the text files took {took:.1f}s")
        start = time.perf_counter()
        index.refresh()
        print(f"ranker rebuild after the change: {time.perf_counter() - start:.2f}s")
        times = []
        for i in range(args.queries):
            question = QUESTIONS[i % len(QUESTIONS)]
            start = time.perf_counter()
            index.search(question, k=5)
            times.append(time.perf_counter() - start)
        times.sort()
        p95 = times[int(0.95 * (len(times) - 1))]
        print(
            f"search over {total} chunks (+ shipped notes): p50 {statistics.median(times) * 1000:.0f} ms, "
            f"p95 {p95 * 1000:.0f} ms ({args.queries} queries, embeddings={args.embeddings})"
        )
        print(f"loadavg: {open('/proc/loadavg').read().strip()}  cpus: {os.cpu_count()}")
    if args.embeddings == "hash":  # what the packaged model adds to each search: one query embedding
        model = make_embeddings("minilm", "", "", "")
        model.embed_query("预热")
        times = []
        for i in range(args.queries):
            start = time.perf_counter()
            model.embed_query(QUESTIONS[i % len(QUESTIONS)])
            times.append(time.perf_counter() - start)
        print(f"MiniLM query embedding: p50 {statistics.median(times) * 1000:.0f} ms")
        print(f"loadavg: {open('/proc/loadavg').read().strip()}  cpus: {os.cpu_count()}")


if __name__ == "__main__":
    main()
