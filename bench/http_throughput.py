"""HTTP throughput: 20 and 50 concurrent S1 conversations through `plangraph serve`, hash and MiniLM.

    PYTHONPATH=. .venv/bin/python bench/http_throughput.py [--sizes 20,50] [--embeddings hash,minilm]
        [--processes 1,2] [--ref REF] [--profile] [--no-write]

Each (embeddings, size) cell starts a fresh `plangraph serve` (bench/http_load.py's server and
driver: S1 → question → resume → report → GET /plans, every result checked against its own
answer) and reports requests/s, p50/p95 of resume → report, and the server's CPU utilisation
(its user + system CPU seconds ÷ (wall × CPUs), from /proc). `--profile` samples the server with
py-spy during the first cell and prints the project functions with the most samples. The table is
written to the `http-throughput` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench.docblock import write_section
from bench.gitref import checkout

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_load  # noqa: E402
from http_load import ROOT, _start_server, run_load  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- http-throughput:start -->", "<!-- http-throughput:end -->"


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of `pid` and its live descendants (the workers of `--processes`)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        child = int(stat.parent.name)
        parents[child] = int(fields[1])
        cpu[child] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent and p not in tree]
        tree.update(kids)
        frontier += kids
    return sum(cpu.get(p, 0.0) for p in tree)


def _top(folded: Path, n: int = 15) -> list[tuple[int, float, str]]:
    """Inclusive samples per project function from py-spy's raw (folded) output."""
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in folded.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        seen = set()
        for frame in stack.split(";"):
            name = re.sub(r":\d+\)", ")", frame)
            if name not in seen and re.search(r"\((graphs|nodes|tools|memory)/", name):
                seen.add(name)
                inclusive[name] += int(count)
    return [(c, 100 * c / max(total, 1), name) for name, c in inclusive.most_common(n)]


def cell(embeddings: str, size: int, profile: Path | None, tree: Path = ROOT, processes: int = 1) -> dict:
    """One server (run from `tree`), `size` conversations; requests/s, resume p50/p95, CPU utilisation."""
    with tempfile.TemporaryDirectory(prefix="plangraph-throughput-") as data_dir:
        http_load.ROOT = tree  # the server's working directory, first on its sys.path (-m)
        try:
            proc, base = _start_server(data_dir, embeddings, processes)
        finally:
            http_load.ROOT = ROOT
        spy = None
        try:
            load = Path("/proc/loadavg").read_text().split()[0]
            if profile is not None:
                spy = subprocess.Popen(
                    [str(Path(sys.executable).with_name("py-spy")), "record", "-r", "100", "-f", "raw"]
                    + ["-o", str(profile), "--pid", str(proc.pid), "--nonblocking", "--subprocesses"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                time.sleep(1)
            cpu0 = _cpu_of(proc.pid)
            try:
                conversations, wall = run_load(base, ["bench-key-a", "bench-key-b"], size)
            except Exception:
                print("".join(getattr(proc, "log_tail", [])), file=sys.stderr)  # the server's side of it
                raise
            cpu = _cpu_of(proc.pid) - cpu0
        finally:
            if spy is not None:
                spy.send_signal(2)
                spy.wait(timeout=60)
            proc.terminate()
            proc.wait(timeout=30)
    problems = [c.problem for c in conversations if c.problem]
    resume = sorted(s for c in conversations for kind, s in c.timings if kind.startswith("invoke resume"))
    requests = sum(len(c.timings) for c in conversations)
    return {
        "ok": not problems,
        "problems": problems[:3],
        "wall": wall,
        "rps": requests / wall,
        "p50": statistics.median(resume),
        "p95": resume[min(len(resume) - 1, round(0.95 * (len(resume) - 1)))],
        "util": cpu / (wall * (os.cpu_count() or 1)),
        "cpu_per_conv": cpu / size,
        "load": load,
    }


def main() -> int:
    """Run the matrix; print and (by default) write the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,50")
    ap.add_argument("--embeddings", default="hash,minilm")
    ap.add_argument("--profile", action="store_true", help="py-spy the server during the first cell")
    ap.add_argument("--ref", help="also serve from this git commit, each cell side by side")
    ap.add_argument(
        "--processes", default="1", help="server processes per cell, e.g. 1,2 (this checkout only)"
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.profile and not shutil.which("py-spy", path=str(Path(sys.executable).parent)):
        ap.error("--profile needs py-spy in the venv (pip install py-spy)")
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    rows: list[str] = []
    top: list[tuple[int, float, str]] = []
    folded = Path(tempfile.mkdtemp()) / "server.txt" if args.profile else None
    with contextlib.ExitStack() as stack:
        # (name, tree, processes) per cell: this checkout at each process count, the old tree at one
        runs = [(head.stdout.strip(), ROOT, int(n)) for n in args.processes.split(",")]
        if args.ref:
            runs.insert(1, (args.ref, stack.enter_context(checkout(args.ref)), 1))
        for embeddings in args.embeddings.split(","):
            for size in [int(s) for s in args.sizes.split(",")]:
                for name, tree, processes in runs:
                    r = cell(embeddings, size, folded if not rows else None, tree, processes)
                    rows.append(
                        f"| {name} | {processes} | {embeddings} | {size} | {'yes' if r['ok'] else 'NO'} | {r['wall']:.1f} | "
                        f"{r['rps']:.2f} | {r['p50']:.2f} | {r['p95']:.2f} | {100 * r['util']:.0f} % | "
                        f"{r['cpu_per_conv']:.2f} | {r['load']} |"
                    )
                    print(rows[-1], flush=True)
                    if folded is not None and not top and folded.exists():
                        top = _top(folded)
    table = "\n".join(
        [
            "| tree | processes | embeddings | conversations | all correct | wall s | requests/s | resume→report p50 s | p95 s | "
            "server CPU utilisation | server CPU s per conversation | load avg |",
            "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    body = f"""## HTTP throughput: 20 and 50 concurrent S1 conversations

Command: `PYTHONPATH=. .venv/bin/python bench/http_throughput.py --sizes {args.sizes} --embeddings {args.embeddings} --processes {args.processes}{" --ref " + args.ref if args.ref else ""}`
(commit {head.stdout.strip()}, {os.cpu_count()} CPUs, {datetime.now():%Y-%m-%d %H:%M}). Each row: a fresh
`plangraph serve` (`--processes` as in the column), N conversations at once (S1 → question → resume → report → GET /plans = 3
requests each). Utilisation = the server's CPU seconds (all its processes) ÷ (wall × CPUs); "load avg" is the 1-minute
load average when the row started — above 2 other sessions held the cores, so utilisation cannot
reach 100 % and the wall times are inflated.

{table}"""
    if top:
        body += "\n\nWhere a turn's time goes (py-spy samples of the server during the first row, project functions, inclusive):\n\n"
        body += "| samples | share | function |\n|---:|---:|---|\n"
        body += "\n".join(f"| {c} | {p:.1f} % | `{name}` |" for c, p, name in top)
    print(body)
    if not args.no_write:
        write_section(DOC, START, END, body)
    return 0 if all("| yes |" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
