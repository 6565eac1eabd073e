"""HTTP throughput: 20 and 50 concurrent S1 conversations through `plangraph serve`, hash and MiniLM.

    PYTHONPATH=. .venv/bin/python bench/http_throughput.py [--sizes 20,50] [--embeddings hash,minilm]
        [--processes 1,3] [--checkpoints sqlite,postgres] [--modes batch,steady] [--steady 5,35]
        [--ref REF] [--profile] [--waits] [--no-write]

Each (embeddings, size) cell starts a fresh `plangraph serve` (bench/http_load.py's server and
driver: S1 → question → resume → report → GET /plans, every result checked against its own
answer) and reports requests/s, p50/p95 of resume → report, and the server's CPU utilisation
(its user + system CPU seconds ÷ (wall × CPUs), from /proc). `--checkpoints postgres` also runs each
cell with its checkpoints in a local PostgreSQL (started for the run with its durable defaults, a
fresh database per cell; memory and plans stay SQLite files in the data dir); the database's own
CPU is its own column, since it shares the two cores. `--profile` samples the server with
py-spy during the first cell and prints the project functions with the most samples. `--waits`
samples every thread of the server (idle ones too) over the first steady cell's window and prints
where threads in the middle of a turn were waiting rather than running: on a lock, a condition, a
file turn (`_waits`). The table is written to the `http-throughput` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from bench.docblock import write_section
from bench.gitref import checkout

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_load  # noqa: E402
from http_load import ROOT, _start_server, run_load  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- http-throughput:start -->", "<!-- http-throughput:end -->"


def _cpu_of(pid: int, reaped: bool = False) -> float:
    """User + system CPU seconds of `pid` and its live descendants (the workers of `--processes`).

    `reaped` adds what `pid`'s ended and waited-for children spent (PostgreSQL's backends).
    """
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    waited = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        child = int(stat.parent.name)
        parents[child] = int(fields[1])
        cpu[child] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if reaped and child == pid:
            waited = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent and p not in tree]
        tree.update(kids)
        frontier += kids
    return waited + sum(cpu.get(p, 0.0) for p in tree)


def _machine() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat (idle and iowait are not busy)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


def _own_cpu() -> float:
    """User + system CPU seconds of this process: the load driver's threads."""
    times = os.times()
    return times.user + times.system


@contextlib.contextmanager
def _postgres() -> Iterator[Callable[[], tuple[str, int]]]:
    """A local PostgreSQL for the run; yields `fresh()` → (URL of a new empty database, postmaster pid)."""
    import psycopg

    from tests.support.postgres import postgres_server

    with postgres_server(durable=True) as url:
        admin = url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        postmaster = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
        made = 0

        def fresh() -> tuple[str, int]:
            nonlocal made
            made += 1
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE cell{made}")
            return f"{url.rsplit('/', 1)[0]}/cell{made}", postmaster

        yield fresh


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


_WAITING = re.compile(r"\bwith\b.*\b\w*(lock|turn)\w*\b|\.(acquire|hold|wait|join)\(|\bsleep\(")
_PRIMITIVES = ("threading.py", "queue.py", "concurrent/futures/_base.py", "asyncio/")
_PACKAGES = Path(sysconfig.get_paths()["purelib"])


def _source_line(frame: str, tree: Path) -> str:
    """The source line a py-spy frame `func (path:line)` points at: the project's or an installed package's."""
    found = re.search(r"\(([\w/.]+\.py):(\d+)\)$", frame)
    if not found:
        return ""
    path = next((p for p in (tree / found.group(1), _PACKAGES / found.group(1)) if p.is_file()), None)
    if path is None:
        return ""
    lines = path.read_text().splitlines()
    number = int(found.group(2))
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _waits(folded: Path, tree: Path, n: int = 8) -> tuple[int, list[tuple[float, str]]]:
    """Where threads inside a turn waited, from py-spy `--idle` samples: (turn samples, [(share, site)]).

    A sample is inside a turn when its stack has a frame of nodes/ or plangraph/runner.py; it is
    waiting when its innermost frame is a threading/queue/asyncio primitive, or a line (the
    project's or a package's, e.g. SqliteSaver's) that takes a lock or a turn (`with …lock`,
    `.hold(`, `.acquire(`, `.wait(`, `sleep(`). The site is the innermost project frame (→ the
    package frame, when the wait is in a package). The request thread waiting for its own graph run
    (`PlanRunner._stream` on a condition) is left out: the graph's own thread works meanwhile.
    """
    turns = 0
    sites: collections.Counter[str] = collections.Counter()
    for line in folded.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not any("(nodes/" in f or "(plangraph/runner.py" in f for f in frames):
            continue
        turns += int(count)
        project = [f for f in frames if re.search(r"\((graphs|nodes|tools|memory|plangraph)/", f)]
        leaf, site = frames[-1], project[-1] if project else frames[-1]
        primitive = any(p in leaf for p in _PRIMITIVES)
        if not (primitive or _WAITING.search(_source_line(leaf, tree))):
            continue
        if primitive and site.startswith("PlanRunner._stream "):
            continue
        sites[site if leaf is site or primitive else f"{site} → {leaf}"] += int(count)
    return turns, [(100 * c / max(turns, 1), site) for site, c in sites.most_common(n)]


def _sample_waits(pid: int, out: Path, seconds: float) -> None:
    """py-spy every thread of `pid` and its workers, idle ones included, for `seconds`."""
    subprocess.run(
        [str(Path(sys.executable).with_name("py-spy")), "record", "--idle", "-r", "50", "-f", "raw"]
        + [
            "-d",
            str(max(1, int(seconds))),
            "-o",
            str(out),
            "--pid",
            str(pid),
            "--nonblocking",
            "--subprocesses",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


def cell(
    embeddings: str,
    size: int,
    profile: Path | None,
    tree: Path = ROOT,
    processes: int = 1,
    database: tuple[str, int] | None = None,
    steady: tuple[float, float] | None = None,
    waits: Path | None = None,
) -> dict:
    """One server (run from `tree`), `size` conversations; requests/s, resume p50/p95, CPU utilisation.

    `database`: (checkpoint URL, postmaster pid) to keep the checkpoints in PostgreSQL.
    `steady`: (warm-up, end) seconds — `size` slots start conversations back to back until `end`,
    and everything is measured over the window from `warm-up` to `end` only: the server at
    saturation, without the ramp-up or the tail in which fewer conversations are left than the
    server runs at once (with several processes, one of them then has nothing to do).
    `waits`: with `steady`, where py-spy writes every thread's samples over the window (`_waits`).
    """
    url, postmaster = database or (None, 0)
    cpus = os.cpu_count() or 1

    def meter() -> tuple[float, ...]:
        busy, total = _machine()
        db = _cpu_of(postmaster, reaped=True) if postmaster else 0.0
        return time.perf_counter(), _cpu_of(proc.pid), db, _own_cpu(), busy, total

    with tempfile.TemporaryDirectory(prefix="plangraph-throughput-") as data_dir:
        http_load.ROOT = tree  # the server's working directory, first on its sys.path (-m)
        try:
            proc, base = _start_server(data_dir, embeddings, processes, url)
        finally:
            http_load.ROOT = ROOT
        spy = None
        marks: list[tuple[float, ...]] = []
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
            first = meter()
            if steady is not None:
                for at in steady:  # the window's two ends, read while the load runs
                    timer = threading.Timer(at, lambda: marks.append(meter()))
                    timer.daemon = True
                    timer.start()
                if waits is not None:
                    sampler = threading.Timer(
                        steady[0], _sample_waits, (proc.pid, waits, steady[1] - steady[0])
                    )
                    sampler.daemon = True
                    sampler.start()
            try:
                conversations, wall = run_load(
                    base, ["bench-key-a", "bench-key-b"], size, steady[1] if steady else None
                )
            except Exception:
                print("".join(getattr(proc, "log_tail", [])), file=sys.stderr)  # the server's side of it
                raise
            last = meter()
        finally:
            if spy is not None:
                spy.send_signal(2)
                spy.wait(timeout=60)
            proc.terminate()
            proc.wait(timeout=30)
    a, b = (marks[0], marks[1]) if steady is not None else (first, last)
    window = b[0] - a[0]
    done = [
        (kind, seconds)
        for c in conversations
        for (kind, seconds), end in zip(c.timings, c.ends, strict=True)
        if a[0] <= end <= b[0]
    ]
    problems = [c.problem for c in conversations if c.problem]
    resume = sorted(seconds for kind, seconds in done if kind.startswith("invoke resume"))
    return {
        "ok": not problems,
        "problems": problems[:3],
        "wall": window,
        "conversations": len(conversations),
        "rps": len(done) / window,
        "p50": statistics.median(resume),
        "p95": resume[min(len(resume) - 1, round(0.95 * (len(resume) - 1)))],
        "util": (b[1] - a[1]) / (window * cpus),
        "db_util": (b[2] - a[2]) / (window * cpus),
        "driver_util": (b[3] - a[3]) / (window * cpus),
        "busy": (b[4] - a[4]) / max(b[5] - a[5], 1),
        "cpu_per_conv": (last[1] - first[1]) / len(conversations),
        "load": load,
    }


def main() -> int:
    """Run the matrix; print and (by default) write the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20,50")
    ap.add_argument("--embeddings", default="hash,minilm")
    ap.add_argument("--profile", action="store_true", help="py-spy the server during the first cell")
    ap.add_argument(
        "--waits", action="store_true", help="where turns wait, sampled over the first steady cell's window"
    )
    ap.add_argument("--ref", help="also serve from this git commit, each cell side by side")
    ap.add_argument(
        "--processes", default="1", help="server processes per cell, e.g. 1,3 (a --ref needs them too)"
    )
    ap.add_argument(
        "--checkpoints",
        default="sqlite",
        help="where the server keeps checkpoints, e.g. sqlite,postgres (postgres: a local server for the run)",
    )
    ap.add_argument(
        "--modes",
        default="batch",
        help="batch (N conversations at once, measured start to end) and/or steady (N slots kept busy)",
    )
    ap.add_argument(
        "--steady",
        default="5,35",
        help="steady mode: warm-up,end seconds; measured over the window between them (default 5,35)",
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if (args.profile or args.waits) and not shutil.which("py-spy", path=str(Path(sys.executable).parent)):
        ap.error("--profile and --waits need py-spy in the venv (pip install py-spy)")
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    stores = args.checkpoints.split(",")
    if unknown := set(stores) - {"sqlite", "postgres"}:
        ap.error(f"--checkpoints: unknown {', '.join(sorted(unknown))}; use sqlite and/or postgres")
    modes = args.modes.split(",")
    if unknown := set(modes) - {"batch", "steady"}:
        ap.error(f"--modes: unknown {', '.join(sorted(unknown))}; use batch and/or steady")
    try:
        warm, until = (float(v) for v in args.steady.split(","))
    except ValueError:
        ap.error("--steady: give warm-up,end seconds, e.g. 5,35")
    if not 0 < warm < until:
        ap.error("--steady: the warm-up must be positive and before the end, e.g. 5,35")
    rows: list[str] = []
    failures: list[str] = []
    top: list[tuple[int, float, str]] = []
    folded = Path(tempfile.mkdtemp()) / "server.txt" if args.profile else None
    waited = Path(tempfile.mkdtemp()) / "waits.txt" if args.waits else None
    if waited is not None and "steady" not in modes:
        ap.error("--waits samples a steady window: add --modes steady")
    wait_rows: tuple[str, int, list[tuple[float, str]]] | None = None
    with contextlib.ExitStack() as stack:
        # (name, tree, processes) per cell: this checkout and the old tree, side by side at each count
        trees = [(head.stdout.strip(), ROOT)]
        if args.ref:
            trees.append((args.ref, stack.enter_context(checkout(args.ref))))
        runs = [(name, tree, int(n)) for n in args.processes.split(",") for name, tree in trees]
        fresh = stack.enter_context(_postgres()) if "postgres" in stores else None
        for embeddings in args.embeddings.split(","):
            for size in [int(s) for s in args.sizes.split(",")]:
                for mode, store, (name, tree, processes) in itertools.product(modes, stores, runs):
                    database = fresh() if fresh is not None and store == "postgres" else None
                    steady = (warm, until) if mode == "steady" else None
                    sample = waited if steady and waited is not None and wait_rows is None else None
                    r = cell(
                        embeddings,
                        size,
                        folded if not rows else None,
                        tree,
                        processes,
                        database,
                        steady,
                        sample,
                    )
                    if sample is not None and sample.exists():
                        wait_rows = (f"{name}, {processes} processes, {embeddings}", *_waits(sample, tree))
                    db = f"{100 * r['db_util']:.0f} %" if database else "–"
                    load = f"{size} at once" if mode == "batch" else f"{size} slots, {warm:g}–{until:g} s"
                    rows.append(
                        f"| {name} | {processes} | {store} | {embeddings} | {load} | {r['conversations']} | "
                        f"{'yes' if r['ok'] else 'NO'} | {r['wall']:.1f} | {r['rps']:.2f} | {r['p50']:.2f} | "
                        f"{r['p95']:.2f} | {100 * r['util']:.0f} % | {db} | {100 * r['driver_util']:.0f} % | "
                        f"{100 * r['busy']:.0f} % | {r['cpu_per_conv']:.2f} | {r['load']} |"
                    )
                    print(rows[-1], flush=True)
                    if not r["ok"]:
                        failures.append(
                            f"{name}, {processes} processes, {embeddings}, {load}: {r['problems'][0]}"
                        )
                    if folded is not None and not top and folded.exists():
                        top = _top(folded)
    table = "\n".join(
        [
            "| tree | processes | checkpoints | embeddings | load | conversations | all correct | measured s | "
            "requests/s | resume→report p50 s | p95 s | server CPU utilisation | PostgreSQL CPU utilisation | "
            "load driver CPU | all cores busy | server CPU s per conversation | load avg |",
            "|---|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    body = f"""## HTTP throughput: 20 and 50 concurrent S1 conversations

Command: `PYTHONPATH=. .venv/bin/python bench/http_throughput.py --sizes {args.sizes} --embeddings {args.embeddings} --processes {args.processes} --checkpoints {args.checkpoints} --modes {args.modes}{" --steady " + args.steady if "steady" in modes else ""}{" --ref " + args.ref if args.ref else ""}`
(commit {head.stdout.strip()}, {os.cpu_count()} CPUs, {datetime.now():%Y-%m-%d %H:%M}). Each row: a fresh
`plangraph serve` (`--processes` as in the column); each conversation is S1 → question → resume → report → GET /plans
(3 requests). Load "N at once": N conversations started together, measured from start to the last one's end (the
tail, when fewer than the server's turn threads are left, is in it). Load "N slots, a–b s": N conversations kept
running (each slot starts a new one, on a new connection, when its last ended) and only the window from a to b
seconds measured — the server at saturation. Utilisation = CPU seconds (the server's processes; PostgreSQL's; this
driver's) ÷ (measured seconds × CPUs); "all cores busy" is the whole machine's share of non-idle time in the window
(/proc/stat); "load avg" is the 1-minute load average when the row started — above 2 other sessions held the cores,
so utilisation cannot reach 100 % and the times are inflated.

{table}"""
    if failures:
        body += "\n\nConversations that failed (first per row):\n\n" + "\n".join(f"- {f}" for f in failures)
    if top:
        body += "\n\nWhere a turn's time goes (py-spy samples of the server during the first row, project functions, inclusive):\n\n"
        body += "| samples | share | function |\n|---:|---:|---|\n"
        body += "\n".join(f"| {c} | {p:.1f} % | `{name}` |" for c, p, name in top)
    if wait_rows is not None:
        where, turns, sites = wait_rows
        body += (
            f"\n\nWhere threads inside a turn waited instead of running ({where}, py-spy `--idle` over the window, "
            f"{turns} samples of threads inside a turn; a request thread waiting for its own graph run is left out):\n\n"
        )
        body += "| share of turn samples | waiting at |\n|---:|---|\n"
        body += "\n".join(f"| {p:.1f} % | `{site}` |" for p, site in sites) or "| 0 % | nowhere |"
    print(body)
    if not args.no_write:
        write_section(DOC, START, END, body)
    return 0 if all("| yes |" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
