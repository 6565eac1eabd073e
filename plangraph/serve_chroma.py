"""One Chroma server for the processes of `plangraph serve --processes N` (unless PLANGRAPH_CHROMA_URL is set).

A local Chroma folder cannot be shared by processes: each PersistentClient keeps its own copy of a
collection's vector index in memory and does not see what another process adds to it. Measured:
after another process stored 3 more block vectors, a process that had read the collection before
counted 6 but its queries still found only its 3 — memory searches and knowledge-base uploads of
one worker were invisible to the others' vector search. So the supervisor starts `chroma run` on
a folder of the data dir (`<data dir>/chroma-server`) on a free loopback port, hands its URL to
every worker (PLANGRAPH_CHROMA_URL), restarts it if it dies and stops it last. Block vectors are
kept in SQLite too, so the server's folder fills itself: memory re-sends a namespace's vectors
when Chroma holds fewer, the knowledge index re-indexes its documents.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from plangraph.errors import UserFacingError

__all__ = ["shared_chroma"]

READY_TIMEOUT_S = 120.0
# Runs `chroma run …` in place of itself once the kernel will stop it with the supervisor.
_LAUNCH = (
    "import os, sys; from plangraph.serve_workers import die_with_parent; "
    "die_with_parent(int(sys.argv[1])); os.execv(sys.argv[2], sys.argv[2:])"
)


def _chroma_command() -> str | None:
    beside = Path(sys.executable).parent / "chroma"
    return str(beside) if beside.is_file() else shutil.which("chroma")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _beats(url: str) -> bool:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    try:
        with direct.open(f"{url}/api/v2/heartbeat", timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


class _Server:
    """`chroma run` on `folder`, restarted on the same port when it exits while wanted."""

    def __init__(self, command: str, folder: Path, log: Path) -> None:
        self.command, self.folder, self.log = command, folder, log
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.stopping = threading.Event()

    def start(self) -> None:
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _LAUNCH,
                    str(os.getpid()),
                    self.command,
                    "run",
                    "--path",
                    str(self.folder),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                ],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: a Ctrl-C reaches the supervisor only
            )

    def wait_ready(self) -> bool:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline and not self.stopping.is_set():
            if self.proc is None or self.proc.poll() is not None:
                return False
            if _beats(self.url):
                return True
            time.sleep(0.2)
        return False

    def watch(self) -> None:
        """Restart the server when it exits (killed, crashed) until asked to stop."""
        while not self.stopping.wait(1.0):
            if self.proc is not None and self.proc.poll() is not None:
                print(
                    f"plangraph serve: Chroma 服务（pid {self.proc.pid}）已退出（退出码 {self.proc.returncode}），"
                    "正在重新启动；期间的向量请求会失败并重试。",
                    file=sys.stderr,
                    flush=True,
                )
                self.start()
                self.wait_ready()

    def stop(self) -> None:
        self.stopping.set()
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)
        except ProcessLookupError:
            pass


@contextmanager
def shared_chroma(data_path: Path) -> Iterator[str]:
    """Start a Chroma server on `data_path/chroma-server` for the workers; yield its URL; stop it after."""
    command = _chroma_command()
    if command is None:
        raise UserFacingError(
            "多进程服务需要一个 Chroma 服务来共享向量，但找不到 `chroma` 命令（chromadb 包）。"
            "请运行 `make install`，或自行启动 Chroma 并设置 PLANGRAPH_CHROMA_URL，或使用 --processes 1。",
            exit_code=1,
        )
    folder = data_path / "chroma-server"
    folder.mkdir(parents=True, exist_ok=True)
    server = _Server(command, folder, data_path / "chroma-server.log")
    server.start()
    watcher = threading.Thread(target=server.watch, name="chroma-watch", daemon=True)
    try:
        if not server.wait_ready():
            raise UserFacingError(
                f"多进程服务用的 Chroma 服务没能启动（{folder}）；日志见 {server.log}。"
                "可以自行启动 Chroma 并设置 PLANGRAPH_CHROMA_URL，或使用 --processes 1。",
                exit_code=1,
            )
        watcher.start()
        yield server.url
    finally:
        server.stop()
        if watcher.is_alive():
            watcher.join(timeout=5)
