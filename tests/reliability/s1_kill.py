"""Helpers for the SIGKILL tests: run S1 through the CLI in a subprocess, kill it, resume it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.integration.scenarios.test_scenarios import S1, S1_ANSWER
from tests.support.offline import OFFLINE_ENV

KILL_CLI = str(Path(__file__).with_name("kill_cli.py"))
ROOT = Path(__file__).resolve().parents[2]
CONVERSATION = "k1"

# Every point at which S1 can be cut: boundaries between steps, and the start, middle and end of
# each agent's run (pv_calc 1 = the run that asks, pv_calc 2 = the run after the answer).
ALL_KILL_POINTS = [
    "boundary:0",
    "pv_calc:start:1",
    "pv_calc:end:1",
    "pv_calc:start:2",
    "pv_calc:inside:2",
    "pv_calc:end:2",
    "boundary:1",
    "sensitivity:start",
    "sensitivity:inside",
    "sensitivity:end",
    "boundary:2",
    "report:start",
    "report:inside",
    "report:end",
    "boundary:3",
    "finalizer:end",
]


def cli_env(data: Path, **extra: str) -> dict[str, str]:
    """Subprocess environment: offline flags, hash embeddings, this data dir."""
    env = {
        **os.environ,
        **OFFLINE_ENV,
        "PLANGRAPH_EMBEDDINGS": "hash",
        "PLANGRAPH_DATA_DIR": str(data),
        "PLANGRAPH_USER_ID": "bob",
        "PYTHONPATH": str(ROOT),
        **extra,
    }
    for name in ("PLANGRAPH_MODEL", "PLANGRAPH_CHECKPOINT_URL", "PLANGRAPH_CHROMA_URL"):
        env.pop(name, None)
    return env


def run_cli(args: list[str], env: dict[str, str], timeout: float = 180) -> tuple[int, list[dict], str]:
    """Run the killable CLI to its end; returns (exit code, JSON events, stderr)."""
    proc = subprocess.run(
        [sys.executable, KILL_CLI, *args], env=env, capture_output=True, text=True, timeout=timeout
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, events, proc.stderr


def run_log(path: Path) -> list[dict[str, Any]]:
    """Agent runs recorded by kill_cli.py."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def normalise_plan(plan: dict[str, Any], data: Path) -> list[dict[str, Any]]:
    """Steps without what differs between two equal runs (ids, the data dir, plan-named files)."""
    text = json.dumps(plan["steps"], ensure_ascii=False, sort_keys=True)
    text = text.replace(str(data), "<DATA>")
    text = re.sub(r"store://[0-9a-f]{32}", "store://<ID>", text)
    text = text.replace(plan["planId"], "<PLAN>")
    steps = json.loads(text)
    for step in steps:
        if step.get("result"):
            step["result"].pop("recordId", None)
            # The agent's internal plan (DOT) quotes outputs truncated to a fixed length, so its
            # text depends on how long the data dir path is; its statuses are checked via `status`.
            step["result"]["context"].pop("ep", None)
    return steps


def kill_then_recover(
    data: Path, kill_at: str, settle: float = 0.0, on_killed: Callable[[], None] = lambda: None
) -> dict[str, Any]:
    """Run S1 with the kill point armed, then resume (answering when asked) until the plan ends.

    `settle` seconds pass between reaching the point and the kill; `on_killed` runs right after the kill, before any resume. Returns the final event, every agent run with the pid that ran it, and the exit codes.
    """
    log = data.parent / f"runs-{kill_at.replace(':', '_')}.jsonl"
    env = cli_env(
        data,
        PLANGRAPH_TEST_KILL_AT=kill_at,
        PLANGRAPH_TEST_KILL_SETTLE=str(settle),
        PLANGRAPH_TEST_RUN_LOG=str(log),
    )
    code, events, err = run_cli(
        ["run", S1, "--conversation", CONVERSATION, "--answer", S1_ANSWER, "--json"], env
    )
    assert code == -signal.SIGKILL, f"{kill_at}: the kill point was never reached (exit {code})\n{err}"
    assert not any(e["event"] == "final" for e in events)
    killed_pid = {r["pid"] for r in run_log(log)}
    on_killed()
    calm = cli_env(data, PLANGRAPH_TEST_RUN_LOG=str(log))
    codes = [code]
    final = None
    for _attempt in range(3):
        code, events, err = run_cli(["resume", "--conversation", CONVERSATION, "--json"], calm)
        codes.append(code)
        if code == 2 and "正在等待回答" in events[-1].get("message", ""):
            code, events, err = run_cli(["resume", "--conversation", CONVERSATION, S1_ANSWER, "--json"], calm)
            codes.append(code)
        if code == 3:  # a fresh question (the cut-off step asked again): answer it
            code, events, err = run_cli(["resume", "--conversation", CONVERSATION, S1_ANSWER, "--json"], calm)
            codes.append(code)
        if code == 0:
            final = events[-1]
            break
        if code == 2 and "计划已经结束" in events[-1].get("message", ""):
            break  # the kill came after the end: nothing to resume
    runs = run_log(log)
    return {
        "final": final,
        "codes": codes,
        "stderr": err,
        "before_kill": [r for r in runs if r["pid"] in killed_pid],
        "after_kill": [r for r in runs if r["pid"] not in killed_pid],
    }


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two JSON values first differ (a readable path), or None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'second' if key not in a else 'first'}"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    if a == b:
        return None
    if isinstance(a, str) and isinstance(b, str):
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        return (
            f"{path} at character {at}: {a[max(0, at - 80) : at + 80]!r} != {b[max(0, at - 80) : at + 80]!r}"
        )
    return f"{path}: {str(a)[:300]!r} != {str(b)[:300]!r}"
