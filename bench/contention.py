"""Memory latency and the S1 CLI run, idle and with a CPU burner on one core, this checkout vs a git ref.

    PYTHONPATH=. .venv/bin/python bench/contention.py --ref e2a0da7 [--pairs 500] [--repeat 3] [--no-write]

For each condition (idle; a `while True: pass` process pinned to CPU 0) and each tree (this
checkout; `--ref` checked out into a temporary worktree), in one run, interleaved:

- memory: a fresh `BlockMemory` with the tree's default embedder (the packaged MiniLM), ingest
  `--pairs` Q&A pairs (2 messages each) in one `add_messages` call (msg/s), then 40 English
  searches (p50) and 20 query embeddings alone (p50);
- S1: `plangraph run S1 --answer … --json` in a fresh data dir with MiniLM embeddings, as a
  new user's first run does: seconds from process start to the first streamed chunk, to the
  end, and the CPU seconds the process used (user + system).

Each measurement runs in its own subprocess with the tree on PYTHONPATH; the 1-minute load average
is recorded beside it, because on a shared machine "idle" is whatever the others leave. The
table is printed and written to the `contention` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- contention:start -->", "<!-- contention:end -->"
S1 = "帮我生成一份光伏经济测算报告"
ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGSMITH_TRACING": "false",
    "ORT_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
    "MPLBACKEND": "Agg",
}
EN = "solar roof inverter tariff payback loan module panel battery storage grid meter survey budget".split()
SITES = ["Riverside", "Hillcrest", "Lakeview", "Oakridge", "杭州", "苏州"]


def memory_measure(pairs: int) -> dict[str, Any]:
    """Run in a subprocess whose sys.path starts with the tree under test."""
    from langchain_core.messages import AIMessage, HumanMessage

    from memory import BlockMemory
    from memory.embeddings import default_embeddings
    from memory.text import tokenize

    tokenize("光伏 warm up")  # jieba's dictionary loads once per process; not part of ingestion
    rng = random.Random(7)
    emb = default_embeddings()
    t0 = time.perf_counter()
    emb.embed_query("warm up")
    load = time.perf_counter() - t0
    start = datetime(2025, 1, 1)
    msgs = []
    for i in range(pairs):
        kw = {"created_at": (start + timedelta(minutes=6 * i)).isoformat()}
        words = rng.sample(EN, 4)
        msgs += [
            HumanMessage(f"{rng.choice(SITES)} {' '.join(words)} {i}?", additional_kwargs=kw),
            AIMessage(f"{' '.join(words[:2])} = {rng.randint(1, 9999)}", additional_kwargs=kw),
        ]
    with tempfile.TemporaryDirectory() as tmp:
        mem = BlockMemory(tmp, emb)
        t1 = time.perf_counter()
        mem.add_messages("ns", msgs)
        mem.flush("ns")
        ingest = len(msgs) / (time.perf_counter() - t1)
        search, embed = [], []
        for _ in range(40):
            t2 = time.perf_counter()
            mem.search("ns", f"{rng.choice(SITES)} {' '.join(rng.sample(EN, 2))}")
            search.append((time.perf_counter() - t2) * 1000)
        for _ in range(20):
            t3 = time.perf_counter()
            emb.embed_query(f"{rng.choice(SITES)} {' '.join(rng.sample(EN, 2))}")
            embed.append((time.perf_counter() - t3) * 1000)
        mem.close()
    return {
        "backend": getattr(emb, "active_backend", "torch"),  # older trees: torch only
        "load_s": load,
        "ingest": ingest,
        "search_p50": statistics.median(search),
        "embed_p50": statistics.median(embed),
    }


def _env(tree: Path) -> dict[str, str]:
    env = {**os.environ, **OFFLINE, "PYTHONPATH": str(tree), "PLANGRAPH_EMBEDDINGS": "minilm"}
    for name in ("PLANGRAPH_MODEL", "PLANGRAPH_CHECKPOINT_URL", "PLANGRAPH_CHROMA_URL", "PLANGRAPH_DATA_DIR"):
        env.pop(name, None)
    return env


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_memory(tree: Path, pairs: int) -> dict[str, Any]:
    """`memory_measure` in a subprocess on `tree`, plus its CPU seconds."""
    script = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); sys.path.insert(1, {str(ROOT / 'bench')!r});"
        f"import json, contention as b; print(json.dumps(b.memory_measure({pairs})))"
    )
    before = _cpu_children()
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tree, env=_env(tree), capture_output=True, text=True, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["cpu_s"] = _cpu_children() - before
    return result


def run_s1(tree: Path) -> dict[str, Any]:
    """The S1 CLI run in a fresh data dir: first chunk, end, CPU seconds."""
    with tempfile.TemporaryDirectory() as data:
        cmd = [sys.executable, "-m", "plangraph.cli", "run", S1, "--answer", ANSWER, "--json"]
        cmd += ["--conversation", "bench"]
        before = _cpu_children()
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=tree,
            env={**_env(tree), "PLANGRAPH_DATA_DIR": data},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        first, first_cpu = None, None
        for line in proc.stdout:
            if first is None and '"chunk"' in line:
                first = time.perf_counter() - t0
                first_cpu = _cpu_of(proc.pid)
        code = proc.wait()
        total = time.perf_counter() - t0
        cpu = _cpu_children() - before
        report = next(Path(data).rglob("*.md"), None)
    if code != 0 or report is None:
        raise RuntimeError(f"S1 in {tree} exited {code} without a report")
    return {"first_chunk_s": first, "first_chunk_cpu_s": first_cpu, "total_s": total, "cpu_s": cpu}


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds a running process has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def burner(on: bool):
    """A busy loop pinned to CPU 0 (another process holding one core), or nothing."""
    if not on:
        yield
        return
    code = "import os\nos.sched_setaffinity(0, {0})\nwhile True:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(0.5)
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


def _row(condition: str, name: str, runs: list[tuple[dict[str, Any], dict[str, Any], str, str]]) -> str:
    """One table row: the median of each column over the passes; load averages as min–max."""

    def med(part: int, key: str) -> float:
        return statistics.median(float(run[part][key]) for run in runs)

    def span(part: int) -> str:
        loads = sorted(float(run[part]) for run in runs)
        return f"{loads[0]:.2f}–{loads[-1]:.2f}" if len(loads) > 1 else f"{loads[0]:.2f}"

    return (
        f"| {condition} | {name} | {runs[0][0]['backend']} | {med(0, 'embed_p50'):.1f} | {med(0, 'search_p50'):.1f} | "
        f"{med(0, 'ingest'):.0f} | {med(0, 'load_s'):.1f} | {span(2)} | {med(1, 'first_chunk_s'):.2f} | "
        f"{med(1, 'first_chunk_cpu_s'):.2f} | {med(1, 'total_s'):.2f} | {med(1, 'cpu_s'):.2f} | {span(3)} |"
    )


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def main() -> None:
    """Run both trees under both conditions and print (and write) the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", required=True, help="the old commit to compare with (e.g. e2a0da7)")
    ap.add_argument("--pairs", type=int, default=500, help="Q&A pairs ingested (2 messages each)")
    ap.add_argument(
        "--repeat", type=int, default=3, help="passes over all cells; each cell reports its median"
    )
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = ap.parse_args()
    # Imported here, not at the top: the measuring subprocesses import this module with the old
    # tree first on sys.path, and an old tree's `bench` package has neither module.
    from bench.docblock import write_section
    from bench.gitref import checkout

    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    new_name = f"this checkout ({head.stdout.strip()})"
    cells: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, Any], str, str]]] = {}
    with checkout(args.ref) as old:
        trees = {new_name: ROOT, args.ref: old}
        for _ in range(args.repeat):  # passes interleave the cells, so a noisy minute hits all of them
            for condition in ("idle", "burner on CPU 0"):
                with burner(condition != "idle"):
                    for name, tree in trees.items():
                        load_m = _load()
                        m = run_memory(tree, args.pairs)
                        load_s = _load()
                        s = run_s1(tree)
                        cells.setdefault((condition, name), []).append((m, s, load_m, load_s))
                        print(condition, name, m, s, load_m, load_s, flush=True)
    rows = [_row(condition, name, runs) for (condition, name), runs in cells.items()]
    table = "\n".join(
        [
            "| condition | tree | embedder | query embedding p50 ms | search p50 ms | ingest msg/s | model load s | "
            "load avg | S1 first chunk s | CPU s to first chunk | S1 end-to-end s | S1 CPU s | load avg |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    body = f"""## Under contention: memory and the S1 CLI run, idle and with one core busy, vs {args.ref}

Command: `PYTHONPATH=. .venv/bin/python bench/contention.py --ref {args.ref} --pairs {args.pairs} --repeat {args.repeat}`
({platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; {datetime.now():%Y-%m-%d %H:%M}).
Memory: {args.pairs * 2} messages ingested in one call, 40 searches, 20 query embeddings, default
embedder of each tree; every cell is the median of {args.repeat} passes (the passes interleave
all cells). S1: `plangraph run` with `--answer`, fresh data dir, MiniLM, first chunk =
first `--json` chunk line after process start. "load avg" is the 1-minute load average read just
before each measurement (memory, then S1); the machine is shared with other sessions, so with a
load average above 2 the "idle" rows are not idle and wall times are inflated — the CPU column and
the side-by-side ratio are the robust numbers.

{table}"""
    print(body)
    if not args.no_write:
        write_section(DOC, START, END, body)


if __name__ == "__main__":
    main()
