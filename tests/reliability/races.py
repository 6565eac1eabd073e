"""Two processes racing turns of one conversation: CLI processes and `plangraph serve` processes.

Used with SQLite (tests/reliability/test_turn_races.py) and with PostgreSQL
(tests/integration/backends/test_postgres_races.py). The checks are the same: exactly one turn
wins, the other is refused (CLI exit 2 / HTTP 409) and changes nothing, and the checkpoint, the
plan store and the report file tell the same story (the winner's answer).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from graphs.context import Context
from graphs.main import build_graph
from plangraph.auth import thread_id_for
from plangraph.checkpoint import open_checkpointer
from plangraph.runner import PlanRunner
from tests.support.local_server import listening_url
from tools.plans.store import PlanStore

ROOT = Path(__file__).resolve().parents[2]
RACE_CLI = str(Path(__file__).with_name("race_cli.py"))
S1 = "帮我生成一份光伏经济测算报告"
ANSWERS = {
    500: "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW",
    800: "地点是杭州余杭区，进行工商业光伏测算，装机容量800kW",
}
BUSY = "正在执行另一轮请求"
KEY = "race-key-0123456789"
USER = "racer"


def cli_env(data: Path, tmp: Path, checkpoint_url: str = "", **extra: str) -> dict[str, str]:
    """A CLI/server environment: no inherited PLANGRAPH_*, hash embeddings, a run log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env.update(
        PLANGRAPH_DATA_DIR=str(data),
        PLANGRAPH_EMBEDDINGS="hash",
        PLANGRAPH_USER_ID=USER,
        PLANGRAPH_TEST_RUN_LOG=str(tmp / "runs.jsonl"),
        PLANGRAPH_API_KEYS=f"{KEY}:{USER}",
    )
    env.update(extra)
    if checkpoint_url:
        env["PLANGRAPH_CHECKPOINT_URL"] = checkpoint_url
    return env


def runs(tmp: Path) -> Counter[str]:
    """How many times each agent ran since the log was last cleared (`clear_runs`)."""
    log = tmp / "runs.jsonl"
    if not log.exists():
        return Counter()
    return Counter(json.loads(line)["agent"] for line in log.read_text().splitlines() if line.strip())


def clear_runs(tmp: Path) -> None:
    """Forget the agent runs logged so far."""
    (tmp / "runs.jsonl").unlink(missing_ok=True)


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """One `plangraph ARGS --json` process, to the end."""
    command = [sys.executable, RACE_CLI, *args, "--json"]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


def race_cli(first: list[str], second: list[str], env: dict[str, str], barrier: Path) -> list[Any]:
    """Start two CLI processes; once both have imported everything, let them go at once."""
    barrier.mkdir(parents=True, exist_ok=True)
    for leftover in barrier.iterdir():
        leftover.unlink()
    race_env = {**env, "PLANGRAPH_TEST_BARRIER": str(barrier), "PLANGRAPH_TEST_STEP_DELAY": "0.7"}
    procs = [
        subprocess.Popen(
            [sys.executable, RACE_CLI, *args, "--json"],
            env=race_env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in (first, second)
    ]
    deadline = time.monotonic() + 120
    while len([p for p in barrier.iterdir() if p.name.startswith("ready-")]) < 2:
        assert time.monotonic() < deadline, "race processes did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.02)
    (barrier / "go").touch()
    outputs = [p.communicate(timeout=300) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]


def events(out: str) -> list[dict]:
    """The JSON events of a CLI run."""
    return [json.loads(line) for line in out.splitlines() if line.strip().startswith("{")]


@contextmanager
def two_servers(env: dict[str, str], count: int = 2) -> Iterator[list[str]]:
    """`count` `plangraph serve` processes on the same data dir (and checkpointer); yields their URLs."""
    server_env = {"PLANGRAPH_TEST_STEP_DELAY": "0.7", **env}
    with ExitStack() as stack:
        urls = []
        for _ in range(count):
            proc = subprocess.Popen(
                [sys.executable, RACE_CLI, "serve", "--port", "0"],
                env=server_env,
                cwd=ROOT,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert proc.stderr is not None
            drain = threading.Thread(target=proc.stderr.read, daemon=True)  # keep the pipe drained
            stack.callback(_stop, proc, drain)
            urls.append(listening_url(proc))
            drain.start()
        for url in urls:
            _wait_healthy(url)
        yield urls


def _wait_healthy(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{url} did not become healthy")


def _stop(proc: subprocess.Popen, drain: threading.Thread) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if drain.is_alive() or drain.ident is not None:
        drain.join(timeout=10)
    assert proc.stderr is not None
    proc.stderr.close()


def invoke(url: str, conversation: str, payload: dict[str, Any], key: str = KEY) -> httpx.Response:
    """POST /plangraph/invoke on `conversation`."""
    body = {"input": payload, "config": {"configurable": {"thread_id": conversation}}}
    return httpx.post(f"{url}/plangraph/invoke", json=body, headers={"X-API-Key": key}, timeout=300)


def race_http(calls: list[tuple[str, str, dict[str, Any]]]) -> list[httpx.Response]:
    """Send the `invoke` calls from one thread each, released together."""
    gate = threading.Barrier(len(calls))
    answers: list[Any] = [None] * len(calls)

    def one(i: int) -> None:
        gate.wait()
        answers[i] = invoke(*calls[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return answers


def capacity_of(plan: dict[str, Any]) -> float:
    """The capacity (kW) pv_calc used in `plan`."""
    step = next(s for s in plan["steps"] if s["agentName"] == "pv_calc")
    return float(step["result"]["context"]["inputs"]["capacity_kw"])


def assert_stores_agree(data: Path, conversation: str, checkpoint_url: str, *, http: bool = False) -> dict:
    """The checkpoint and the plan store hold the same newest plan; returns it.

    `http`: the conversation was made through the HTTP API (its thread id is namespaced per user).
    """
    context = Context(user_id=USER, conversation_id=conversation, data_dir=str(data))
    thread_id = thread_id_for(USER, conversation) if http else conversation
    with open_checkpointer(context.data_path, checkpoint_url) as saver:
        plan = PlanRunner(build_graph(checkpointer=saver), context, thread_id=thread_id).current_plan()
    assert plan is not None
    records = PlanStore(data / "plans.sqlite").list(conversation_id=conversation)
    stored = next(r for r in records if r["planId"] == plan["planId"])
    assert [s["status"] for s in stored["plan"]["steps"]] == [s["status"] for s in plan["steps"]]
    assert [s.get("result") for s in stored["plan"]["steps"]] == [s.get("result") for s in plan["steps"]]
    newer = [r for r in records if r["createdAt"] > stored["createdAt"]]
    assert newer == [], "the plan store holds a plan the checkpoint does not"
    return plan
