"""S5: SIGKILL the CLI while a step runs, start again, resume: nothing completed re-runs, nothing lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from hold_step_cli import HOLD_MESSAGE
from test_scenarios import S1, S1_ANSWER

HELD = str(Path(__file__).with_name("hold_step_cli.py"))


def _cli(*args: str, env: dict, script: str | None = None) -> subprocess.Popen:
    command = [sys.executable, script, *args] if script else [sys.executable, "-m", "plangraph.cli", *args]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )


def test_s5_sigkill_inside_a_step_then_resume(tmp_path):
    env = {**os.environ, "PLANGRAPH_DATA_DIR": str(tmp_path / "data"), "PLANGRAPH_USER_ID": "bob"}
    proc = _cli("run", S1, "--conversation", "k1", "--answer", S1_ANSWER, "--json", env=env, script=HELD)
    seen: list[dict] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        seen.append(event)
        if event["event"] == "chunk" and event.get("content") == HOLD_MESSAGE:
            proc.send_signal(signal.SIGKILL)  # sensitivity has started and is held open
            break
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    assert not any(e["event"] == "final" for e in seen)

    with _cli("resume", "--conversation", "k1", "--json", env=env) as again:
        out, err = again.communicate(timeout=300)
    assert again.returncode == 0, out + err
    events = [json.loads(line) for line in out.splitlines()]
    final = events[-1]
    assert final["event"] == "final"
    assert [s["status"] for s in final["plan"]["steps"]] == ["completed"] * 3
    rerun = {e["index"] for e in events if e["event"] == "chunk" and "agentChatResponse" in e}
    assert 0 not in rerun  # pv_calc had completed before the kill and did not run again
    reports = sorted((tmp_path / "data" / "artifacts").rglob("*.md"))
    assert len(reports) == 1, reports
