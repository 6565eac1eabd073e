"""Cold start: time to the first streamed chunk and the whole S1 CLI run, this checkout vs git refs.

    PYTHONPATH=. .venv/bin/python bench/cold_start.py --ref e2a0da7 [--ref 1dfc728] [--runs 3] [--no-write]

Each run is `plangraph run S1 --answer … --json` in a fresh data dir with MiniLM embeddings, as a
new user's first run (bench.contention.run_s1): seconds from process start to the first `chunk`
line, the CPU seconds the process had used by then, seconds to the end, and the CPU seconds of the
whole run. The trees take turns (this checkout, then each ref, `--runs` rounds), each in its own
process with the tree on PYTHONPATH and this venv's packages. The 1-minute load average is read
before every run and printed beside it: on a shared machine, wall time is CPU time stretched by
the others' load, so the table gives both and the summary compares medians of each.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

from bench.contention import run_s1
from bench.docblock import write_section
from bench.gitref import checkout

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- cold-start:start -->", "<!-- cold-start:end -->"
COLUMNS = ("first_chunk_s", "first_chunk_cpu_s", "total_s", "cpu_s")


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _head() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip()


def main() -> None:
    """Run every tree `--runs` times, interleaved; print the table and write it to docs/benchmarks.md."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--ref", action="append", required=True, help="an old commit to compare with (repeatable)"
    )
    ap.add_argument("--runs", type=int, default=3, help="rounds; each round runs every tree once")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = ap.parse_args()
    rows: list[str] = []
    results: dict[str, list[dict[str, float]]] = {}
    with ExitStack() as stack:
        trees = {f"this checkout ({_head()})": ROOT}
        for ref in args.ref:
            trees[ref] = stack.enter_context(checkout(ref))
        for round_no in range(1, args.runs + 1):
            for name, tree in trees.items():
                load = _load()
                s = run_s1(tree)
                s["load"] = load
                results.setdefault(name, []).append(s)
                rows.append(
                    f"| {round_no} | {name} | {s['first_chunk_s']:.2f} | {s['first_chunk_cpu_s']:.2f} | "
                    f"{s['total_s']:.2f} | {s['cpu_s']:.2f} | {load:.1f} |"
                )
                print(rows[-1], flush=True)
    summary = []
    new_name = next(iter(results))
    new = {c: statistics.median(r[c] for r in results[new_name]) for c in COLUMNS}
    for name, runs in results.items():
        med = {c: statistics.median(r[c] for r in runs) for c in COLUMNS}
        loads = [r["load"] for r in runs]
        ratio = " | ".join(f"{med[c] / new[c]:.1f}×" for c in ("total_s", "cpu_s"))
        summary.append(
            f"| {name} | {med['first_chunk_s']:.2f} | {med['first_chunk_cpu_s']:.2f} | {med['total_s']:.2f} | "
            f"{med['cpu_s']:.2f} | {ratio} | {min(loads):.1f}–{max(loads):.1f} |"
        )
    refs = " ".join(f"--ref {r}" for r in args.ref)
    body = f"""## Cold start: first streamed chunk and the S1 CLI run, this checkout vs {", ".join(args.ref)}

Command: `PYTHONPATH=. .venv/bin/python bench/cold_start.py {refs} --runs {args.runs}`
({platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; {datetime.now():%Y-%m-%d %H:%M}).
S1 = `plangraph run 帮我生成一份光伏经济测算报告 --answer … --json`, a fresh data dir per run, MiniLM
embeddings, trees taking turns. First chunk = the first `chunk` line after process start (CPU: the
process's user + system seconds at that moment). "load" = the 1-minute load average just before
the run; the machine (2 cores) is shared with other sessions, so wall times carry their load and the
CPU columns are the steadier comparison.

Medians ("× slower" = the tree's median over this checkout's):

| tree | first chunk s | CPU s to first chunk | S1 end-to-end s | S1 CPU s | × end-to-end | × CPU | load (min–max) |
|---|---:|---:|---:|---:|---:|---:|---|
{chr(10).join(summary)}

Every run:

| round | tree | first chunk s | CPU s to first chunk | S1 end-to-end s | S1 CPU s | load |
|---|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}"""
    print(body)
    if not args.no_write:
        write_section(DOC, START, END, body)


if __name__ == "__main__":
    main()
