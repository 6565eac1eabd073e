"""`langgraph dev` started once per module on a free port, offline, in a temp working dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.local_server import free_port, stop_process, wait_until_ready
from tests.support.offline import OFFLINE_ENV

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class DevServer:
    url: str
    data_dir: Path
    log: Path


def _langgraph_command() -> list[str]:
    beside = Path(sys.executable).parent / "langgraph"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "langgraph_cli"]


def _local_config(work: Path) -> Path:
    """The repo's langgraph.json with absolute paths, so the server can run outside the repo.

    `langgraph dev` keeps its state in `.langgraph_api/` under the working dir; running it in a temp
    dir keeps the checkout clean and every test run fresh. The temp dir has no `.env`, like a clean
    clone: the server must start without one.
    """
    config = json.loads((REPO / "langgraph.json").read_text())
    config["dependencies"] = [str((REPO / dep).resolve()) for dep in config["dependencies"]]
    config["graphs"] = {name: str(REPO / spec.removeprefix("./")) for name, spec in config["graphs"].items()}
    path = work / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory) -> Iterator[DevServer]:
    work = tmp_path_factory.mktemp("langgraph-dev")
    config = _local_config(work)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env.update(OFFLINE_ENV, PLANGRAPH_DATA_DIR=str(work / "data"), PLANGRAPH_EMBEDDINGS="hash")
    log = work / "server.log"
    command = [*_langgraph_command(), "dev", "--no-browser", "--no-reload", "--port", str(port)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--config", str(config)],
            cwd=work,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def ok() -> bool:
        with direct.open(f"{url}/ok", timeout=2) as response:
            return response.status == 200

    try:
        wait_until_ready(proc, ok, log, f"langgraph dev on port {port}", timeout=120)
        yield DevServer(url, work / "data", log)
    finally:
        stop_process(proc)
