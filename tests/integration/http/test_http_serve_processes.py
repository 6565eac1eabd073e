"""`plangraph serve --processes N`: several server processes on one port, supervised.

Real processes on a free port: a conversation asked on one connection is answered on another
(whichever process takes it), a killed worker is replaced while the other keeps serving,
SIGTERM stops them all, and a bad process count is named back with what to do.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import chromadb
import httpx
import pytest
from chromadb.config import Settings

from tests.integration.http.http_support import human

ROOT = Path(__file__).resolve().parents[3]
S1 = "帮我生成一份光伏经济测算报告"

pytestmark = pytest.mark.slow


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    return {
        **env,
        "PLANGRAPH_DATA_DIR": str(data_dir),
        "PLANGRAPH_EMBEDDINGS": "hash",
        "PLANGRAPH_API_KEYS": "k1:alice",
        **extra,
    }


def _workers(parent: int) -> list[int]:
    """The server processes the supervisor spawned (not multiprocessing's resource tracker)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if ppid == parent and b"multiprocessing-fork" in cmdline:
            found.append(int(stat.parent.name))
    return sorted(found)


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class _Server:
    def __init__(self, data_dir: Path, processes: int) -> None:
        cmd = [sys.executable, "-m", "plangraph.cli", "serve", "--port", "0", "--processes", str(processes)]
        self.proc = subprocess.Popen(cmd, env=_env(data_dir), cwd=ROOT, stderr=subprocess.PIPE, text=True)
        assert self.proc.stderr is not None
        self.lines: list[str] = []
        self.url = ""
        for line in self.proc.stderr:
            self.lines.append(line)
            if found := re.search(r"listening on (http://127\.0\.0\.1:\d+) \((\d+) processes\)", line):
                self.url = found.group(1)
                assert int(found.group(2)) == processes
                break
        assert self.url, "".join(self.lines)
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        self._drainer.join(timeout=30)
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        return code


def test_a_conversation_moves_between_processes_and_a_killed_worker_is_replaced(tmp_path):
    server = _Server(tmp_path, 2)
    try:
        workers = _workers(server.proc.pid)
        assert len(workers) == 2, workers
        # Listening was reported only once every worker answers: no retry needed.
        assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200

        # Each request on a new connection: the kernel spreads them over the two sockets, and
        # the conversation's state lives in the shared data dir, not in a process.
        headers = {"X-API-Key": "k1", "X-Conversation-Id": "moving"}
        first = httpx.post(
            f"{server.url}/plangraph/invoke", json={"input": human(S1)}, headers=headers, timeout=120
        ).json()["output"]
        assert "__interrupt__" in first
        resume = {
            "input": {"resume": "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"},
            "config": {"configurable": {"thread_id": "moving"}},
        }
        done = httpx.post(
            f"{server.url}/plangraph/invoke", json=resume, headers={"X-API-Key": "k1"}, timeout=120
        ).json()["output"]
        assert [s["status"] for s in done["plan"]["steps"]] == ["completed"] * 3
        assert done["plan"]["steps"][0]["result"]["context"]["inputs"]["capacity_kw"] == 500

        port = server.url.rsplit(":", 1)[1]
        second = subprocess.run(
            [sys.executable, "-m", "plangraph.cli", "serve", "--port", port, "--processes", "2"],
            env=_env(tmp_path),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (
            second.returncode == 2 and f"无法监听 127.0.0.1:{port}" in second.stderr
        )  # not half the traffic

        os.kill(workers[0], signal.SIGKILL)
        while _alive(workers[0]):  # its socket closes with it; a connection queued there is lost
            time.sleep(0.01)
        # The other worker keeps answering while the supervisor starts a replacement. A connection
        # the kernel had already queued at the dead worker's socket is reset, as with any server
        # process that dies: the client retries it (at most once per request here).
        resets = 0
        for _ in range(20):
            try:
                status = httpx.get(f"{server.url}/healthz", timeout=10).status_code
            except httpx.TransportError:
                resets += 1
                status = httpx.get(f"{server.url}/healthz", timeout=10).status_code
            assert status == 200
        assert resets <= 2
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            now = _workers(server.proc.pid)
            if len(now) == 2 and workers[0] not in now:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"no replacement worker: {_workers(server.proc.pid)}\n{''.join(server.lines)}")
        record = httpx.get(
            f"{server.url}/plans/{done['plan']['planId']}", headers={"X-API-Key": "k1"}, timeout=30
        ).json()
        assert record["status"] == "completed"

        # The workers keep their vectors in one Chroma server (a local folder cannot be shared:
        # each process would keep its own stale copy of the index), started in the data dir.
        [chroma_url] = re.findall(r"in a Chroma server at (http://127\.0\.0\.1:\d+)", "".join(server.lines))
        host, chroma_port = chroma_url.removeprefix("http://").split(":")
        chroma = chromadb.HttpClient(
            host=host, port=int(chroma_port), settings=Settings(anonymized_telemetry=False)
        )
        sizes = [chroma.get_collection(c.name).count() for c in chroma.list_collections()]
        assert sum(sizes) > 0
        assert (tmp_path / "chroma-server").is_dir() and not (tmp_path / "memory" / "chroma").exists()
    finally:
        code = server.stop()
    log = "".join(server.lines)
    assert code == 0, log
    with pytest.raises(httpx.TransportError):  # stopped with the workers
        httpx.get(f"{chroma_url}/api/v2/heartbeat", timeout=5)
    assert "已退出" in log and "正在启动新的进程" in log
    assert "Traceback" not in log
    assert _workers(server.proc.pid) == []


def _serving(data_dir: Path) -> list[int]:
    """Processes still serving `data_dir`: workers and multiprocessing's helper (their environment)
    and the Chroma server (its --path)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes() if b"multiprocessing" in cmdline else b""
        except OSError:
            continue
        mine = f"PLANGRAPH_DATA_DIR={data_dir}\0".encode() in environ or str(data_dir).encode() in cmdline
        if mine and _alive(int(proc.name)) and int(proc.name) != os.getpid():
            found.append(int(proc.name))
    return found


def test_a_killed_supervisor_takes_its_workers_and_chroma_server_with_it(tmp_path):
    """SIGKILL (or the OOM killer) gives the supervisor no chance to stop anything itself."""
    server = _Server(tmp_path, 2)
    try:
        workers = _workers(server.proc.pid)
        [chroma_url] = re.findall(r"in a Chroma server at (http://127\.0\.0\.1:\d+)", "".join(server.lines))
        serving = set(_serving(tmp_path)) - {server.proc.pid}
        chroma = [p for p in serving if b"chroma" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert len(workers) == 2 and set(workers) <= serving and len(chroma) == 1, serving
        server.proc.kill()
        server.proc.wait(timeout=10)
        deadline = time.monotonic() + 30
        while _serving(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _serving(tmp_path) == [], "still running after the supervisor was killed"
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{chroma_url}/api/v2/heartbeat", timeout=5)
    finally:  # whatever failed above, leave nothing running for the next test
        server.proc.kill()
        for pid in _serving(tmp_path):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        server.proc.wait(timeout=10)
        assert server.proc.stderr is not None
        server.proc.stderr.close()


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--processes", "0"], {}, "进程数 0 不可用"),
        ([], {"PLANGRAPH_HTTP_PROCESSES": "two"}, "PLANGRAPH_HTTP_PROCESSES='two' 不是整数"),
    ],
)
def test_a_bad_process_count_is_named_with_what_to_do(tmp_path, args, env, expected):
    cmd = [sys.executable, "-m", "plangraph.cli", "serve", "--port", "0", *args]
    out = subprocess.run(
        cmd, env=_env(tmp_path, **env), cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2
    assert expected in out.stderr and "CPU 核数" in out.stderr
