"""HTTP load: N concurrent conversations, each S1 → question → resume → report, over the HTTP API.

Starts `plangraph serve --port 0` (a free port) in a subprocess with a fresh data dir and two
API keys, runs the conversations from a thread pool, checks every result against its own
answer (no state mixed), prints requests/s and p50/p95 latency per request type, and rewrites
the `http-load` section of docs/benchmarks.md.

    PYTHONPATH=. .venv/bin/python bench/http_load.py [--conversations 20] [--embeddings hash] [--no-write]

The load test (tests/integration/http/test_http_load.py) drives the same `run_load`.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.docblock import write_section
from tests.support.offline import OFFLINE_ENV

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- http-load:start -->", "<!-- http-load:end -->"
S1 = "帮我生成一份光伏经济测算报告"
CITIES = ("北京", "天津", "石家庄", "太原", "沈阳", "长春", "哈尔滨", "上海", "南京", "苏州", "杭州")


@dataclass
class Conversation:
    """One driven conversation: what it asked for, what came back, how long each request took."""

    index: int
    city: str
    capacity_kw: int
    timings: list[tuple[str, float]] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)  # perf_counter() when each timed request ended
    problem: str = ""


def answer_for(index: int) -> tuple[str, int, str]:
    """A distinct (city, capacity, answer text) per conversation, so a mix-up is visible."""
    city, capacity = CITIES[index % len(CITIES)], 300 + 10 * index
    return city, capacity, f"地点是{city}，进行工商业光伏测算，装机容量{capacity}kW"


def drive(base_url: str, key: str, index: int, timeout: float = 300) -> Conversation:
    """S1 → question → resume with this conversation's answer → completed plan, checked.

    A request the server fails (HTTP 4xx/5xx) ends the conversation with that as its problem;
    the other conversations go on, so one failure is reported beside the numbers, not instead.
    """
    city, capacity, answer = answer_for(index)
    conv = Conversation(index, city, capacity)
    try:
        return _drive(base_url, key, conv, answer, timeout)
    except httpx.HTTPStatusError as error:
        conv.problem = (
            f"HTTP {error.response.status_code} from {error.request.url.path}: {error.response.text[:200]}"
        )
        return conv


def _drive(base_url: str, key: str, conv: Conversation, answer: str, timeout: float) -> Conversation:
    city, capacity, index = conv.city, conv.capacity_kw, conv.index
    thread = f"load-{index}"
    with httpx.Client(base_url=base_url, headers={"X-API-Key": key}, timeout=timeout) as client:

        def timed(kind: str, method: str, path: str, **kwargs: object) -> dict:
            start = time.perf_counter()
            response = client.request(method, path, **kwargs)  # type: ignore[arg-type]
            conv.ends.append(time.perf_counter())
            conv.timings.append((kind, conv.ends[-1] - start))
            response.raise_for_status()
            return response.json()

        body = {"input": {"messages": [{"type": "human", "content": S1}]}}
        first = timed(
            "invoke S1 → question",
            "POST",
            "/plangraph/invoke",
            json=body,
            headers={"X-Conversation-Id": thread},
        )
        if "__interrupt__" not in first["output"]:
            conv.problem = "S1 did not ask for the missing parameters"
            return conv
        resume = {"input": {"resume": answer}, "config": {"configurable": {"thread_id": thread}}}
        done = timed("invoke resume → report", "POST", "/plangraph/invoke", json=resume)["output"]
        plan_id = done["plan"]["planId"]
        record = timed("GET /plans/{id}", "GET", f"/plans/{plan_id}")
    statuses = [s["status"] for s in done["plan"]["steps"]]
    inputs = done["plan"]["steps"][0]["result"]["context"].get("inputs", {})
    if statuses != ["completed"] * 3 or record["status"] != "completed":
        conv.problem = f"plan not completed: {statuses} / {record['status']}"
    elif inputs.get("capacity_kw") != capacity or city not in str(inputs.get("location")):
        conv.problem = (
            f"asked {city} {capacity}kW, got {inputs.get('location')} {inputs.get('capacity_kw')}kW"
        )
    elif done["conversationId"] != thread or record["conversationId"] != thread:
        conv.problem = f"conversation id mixed up: {done['conversationId']} / {record['conversationId']}"
    return conv


def run_load(
    base_url: str, keys: list[str], n: int, duration: float | None = None
) -> tuple[list[Conversation], float]:
    """Drive `n` conversations at once (keys used in turn); return them and the wall time.

    With `duration`, each of the `n` slots starts a new conversation (a new connection) as soon as
    its last one ended, until `duration` seconds have passed: a steady load of `n` at once.
    """
    start = time.perf_counter()

    def slot(i: int) -> list[Conversation]:
        done = [drive(base_url, keys[i % len(keys)], i)]
        while duration is not None and time.perf_counter() - start < duration:
            index = i + n * len(done)
            done.append(drive(base_url, keys[index % len(keys)], index))
        return done

    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(slot, i) for i in range(n)]
        conversations = [c for f in futures for c in f.result()]
    return conversations, time.perf_counter() - start


def summary_rows(conversations: list[Conversation], wall: float) -> list[list[str]]:
    """Per request type: count, requests/s over the wall time, p50 and p95 latency."""
    by_kind: dict[str, list[float]] = defaultdict(list)
    for conv in conversations:
        for kind, seconds in conv.timings:
            by_kind[kind].append(seconds)
    rows = []
    for kind, values in [*by_kind.items(), ("all requests", [v for vs in by_kind.values() for v in vs])]:
        values = sorted(values)
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        rows.append(
            [
                kind,
                str(len(values)),
                f"{len(values) / wall:.2f}",
                f"{statistics.median(values):.2f}",
                f"{p95:.2f}",
            ]
        )
    return rows


def _start_server(
    data_dir: str, embeddings: str, processes: int = 1, checkpoint_url: str | None = None
) -> tuple[subprocess.Popen, str]:
    env = {
        **os.environ,
        **OFFLINE_ENV,
        "PLANGRAPH_DATA_DIR": data_dir,
        "PLANGRAPH_EMBEDDINGS": embeddings,
        "PLANGRAPH_API_KEYS": "bench-key-a:bench-a,bench-key-b:bench-b",
        "PLANGRAPH_RATE_LIMIT": "0",
    }
    for name in (
        "PLANGRAPH_MODEL",
        "PLANGRAPH_CHECKPOINT_URL",
        "PLANGRAPH_CHROMA_URL",
        "PLANGRAPH_API_KEYS_FILE",
    ):
        env.pop(name, None)
    if checkpoint_url:  # checkpoints in PostgreSQL; memory and plans stay in the data dir
        env["PLANGRAPH_CHECKPOINT_URL"] = checkpoint_url
    cmd = [sys.executable, "-m", "plangraph.cli", "serve", "--port", "0"]
    if processes > 1:  # older trees have no --processes
        cmd += ["--processes", str(processes)]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if found := re.search(r"listening on (http://\S+)", line):
            base = found.group(1)
            break
    else:
        raise RuntimeError(f"plangraph serve exited with code {proc.wait()} before listening")
    tail: deque[str] = deque(maxlen=400)  # the server's last log lines, shown when a run fails
    proc.log_tail = tail  # type: ignore[attr-defined]

    def drain() -> None:  # keep the pipe drained
        assert proc.stderr is not None
        for line in proc.stderr:
            tail.append(line)

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("plangraph serve did not answer /healthz within 60 s")


def main() -> int:
    """Run the bench and print (and by default write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument(
        "--embeddings", default="hash", help="PLANGRAPH_EMBEDDINGS of the server (hash | minilm)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="plangraph-http-load-") as data_dir:
        proc, base = _start_server(data_dir, args.embeddings)
        try:
            conversations, wall = run_load(base, ["bench-key-a", "bench-key-b"], args.conversations)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    problems = [f"conversation {c.index}: {c.problem}" for c in conversations if c.problem]
    rows = summary_rows(conversations, wall)
    table = "\n".join(
        ["| request | count | requests/s | p50 s | p95 s |", "|---|---|---|---|---|"]
        + [f"| {' | '.join(row)} |" for row in rows]
    )
    cpus = os.cpu_count()
    body = f"""## HTTP API under load

`{args.conversations}` concurrent conversations over HTTP (`plangraph serve` on 127.0.0.1, SQLite
checkpoints, `PLANGRAPH_EMBEDDINGS={args.embeddings}`, offline agents), each S1 → question →
`{{"resume": …}}` → completed report, then `GET /plans/{{id}}`; two API keys. Every conversation
completed with its own city and capacity: {"yes" if not problems else "NO — " + "; ".join(problems)}.
Wall time {wall:.1f} s; requests/s is count ÷ wall time.

{table}

Machine: {platform.machine()}, {cpus} CPUs, Python {platform.python_version()}; shared with other
jobs while measured (1-minute load average {load_before:.1f} when the run started), so treat the
numbers as an order of magnitude. Turns are CPU-bound offline (report charts), so latency grows
with concurrency on {cpus} CPUs; `GET /plans` stays fast because turns run on their own pool.
Reproduce: `PYTHONPATH=. .venv/bin/python bench/http_load.py --conversations {args.conversations}`"""
    print(body)
    if not args.no_write:
        write_section(DOC, START, END, body)
        print(f"wrote the http-load section of {DOC.relative_to(ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
