"""The CLI when the checkpoint database cannot be opened, e.g. a full disk (issue 12 item 9).

Before: a traceback, and no `error` event under `--json`. The full disk is a file-size limit
(RLIMIT_FSIZE = 0, SIGXFSZ ignored) on the CLI process: every write fails as on a full disk.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _no_room() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_cli_with_a_full_disk_when_the_checkpointer_opens_is_a_clear_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env.update(PLANGRAPH_DATA_DIR=str(tmp_path / "data"), PLANGRAPH_EMBEDDINGS="hash")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "plangraph.cli",
            "run",
            "帮我生成一份光伏经济测算报告",
            "--conversation",
            "c1",
            "--json",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=_no_room,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["event"] == "error" and "无法打开检查点数据库" in last["message"]
    assert "磁盘空间" in last["message"]
