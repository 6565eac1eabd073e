"""`plangraph serve --processes N`: N server processes on one port, each with its own listening socket.

One Python process runs Python on one core at a time (the GIL), so a server that should use every
core runs several processes. They share nothing in memory: turns are kept apart by the
per-conversation lock and the stores are multi-process safe (docs/scale-out.md).

Why not one shared listening socket (uvicorn's `--workers`): every process waits on the same
socket and whoever wakes first takes the connection; measured with 50 keep-alive clients, one of
two processes took three quarters of them and the machine stayed a third idle. Here each worker
binds its own socket with `SO_REUSEPORT` and the kernel spreads connections over them by a hash
of the client's address and port. The parent binds the port first (without listening, so it
receives nothing) and holds it while workers come and go, so `--port 0` still picks one free
port for all of them and a restarted worker gets the same one.

The parent supervises: it reports the address once every worker answers, stops them all on
SIGINT/SIGTERM (each finishes its running requests, as a single `plangraph serve` does), and
replaces a worker that dies while serving. A worker that dies before it has served stops the
whole server with its error — the same failure would repeat on every restart. A supervisor that
is killed outright (SIGKILL, the OOM killer) cannot stop anything: on Linux each worker asks the
kernel for a SIGTERM when its parent ends (`die_with_parent`), and so does the workers' Chroma
server (plangraph/serve_chroma.py), so none is left holding the port or the data dir.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

__all__ = ["die_with_parent", "reserve_port", "supervise"]

READY_TIMEOUT_S = 180.0  # a worker imports the graph and opens the stores before it listens
STOP_TIMEOUT_S = 30.0
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """Have the kernel send this process SIGTERM when `parent` (the thread that started it) ends.

    Linux only (prctl PR_SET_PDEATHSIG; kept across exec); elsewhere nothing changes. If the
    parent is already gone, the signal is sent now.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        return
    if os.getppid() != parent:  # it ended before the request was made
        os.kill(os.getpid(), signal.SIGTERM)


def _socket(family: socket.AddressFamily) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return sock


def reserve_port(host: str, port: int, family: socket.AddressFamily) -> socket.socket:
    """A bound, non-listening socket that holds the port (and picks one for port 0) for the workers.

    The port is first bound without SO_REUSEPORT: with it alone, a second server started on a
    port that is already served would bind too and silently take half of its connections.
    """
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))  # OSError (address in use) when anything listens there
        port = probe.getsockname()[1]
    sock = _socket(family)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _worker(
    address: tuple[str, int],
    family: socket.AddressFamily,
    app_factory: Callable[[], Any],
    ready: Connection,
    parent: int,
) -> None:
    """One server process: its own SO_REUSEPORT socket on the shared port, then uvicorn until told to stop."""
    die_with_parent(parent)
    import uvicorn

    sock = _socket(family)
    sock.bind(address)
    server = uvicorn.Server(uvicorn.Config(app_factory, factory=True, log_level="info", access_log=False))

    def report_ready() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        ready.send(server.started)
        ready.close()

    threading.Thread(target=report_ready, daemon=True).start()
    server.run(sockets=[sock])


class _Worker:
    def __init__(self, start: Callable[[], tuple[BaseProcess, Connection]]) -> None:
        self._start = start
        self.process, self.ready = start()
        self.served = False

    def restart(self) -> None:
        self.process, self.ready = self._start()
        self.served = False

    def wait_ready(self, deadline: float) -> bool:
        """True once the worker listens; False when it died or the deadline passed first."""
        while time.monotonic() < deadline:
            if self.ready.poll(0.2):
                try:
                    self.served = bool(self.ready.recv())
                except EOFError:
                    return False
                return self.served
            if not self.process.is_alive():
                return False
        return False


def supervise(
    reserved: socket.socket,
    processes: int,
    app_factory: Callable[[], Any],
    on_ready: Callable[[], None],
) -> int:
    """Run `processes` workers on `reserved`'s port until SIGINT/SIGTERM; 0 on a clean stop, 1 if one failed to start."""
    address = reserved.getsockname()[:2]
    family = socket.AddressFamily(reserved.family)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads or locks forked

    def start() -> tuple[BaseProcess, Connection]:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_worker, args=(address, family, app_factory, send, os.getpid()), daemon=False
        )
        process.start()
        send.close()
        return process, receive

    stopping = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stopping.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    workers: list[_Worker] = []
    try:
        workers = [_Worker(start) for _ in range(processes)]
        deadline = time.monotonic() + READY_TIMEOUT_S
        for worker in workers:
            if not worker.wait_ready(deadline) and not stopping.is_set():
                code = worker.process.exitcode
                print(
                    f"plangraph serve: 一个服务进程没能启动（退出码 {code}），已停止全部进程；错误见上方日志。",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
        if not stopping.is_set():
            on_ready()
        while not stopping.wait(0.5):
            for index, worker in enumerate(workers):
                if worker.process.is_alive():
                    continue
                print(
                    f"plangraph serve: 服务进程 {index}（pid {worker.process.pid}）已退出（退出码 "
                    f"{worker.process.exitcode}），正在启动新的进程。",
                    file=sys.stderr,
                    flush=True,
                )
                worker.restart()
                if not worker.wait_ready(time.monotonic() + READY_TIMEOUT_S) and not stopping.is_set():
                    print(
                        f"plangraph serve: 替换的服务进程没能启动（退出码 {worker.process.exitcode}），已停止全部进程。",
                        file=sys.stderr,
                        flush=True,
                    )
                    return 1
        return 0
    finally:
        for worker in workers:
            if worker.process.is_alive():
                worker.process.terminate()  # SIGTERM: uvicorn finishes the running requests
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for worker in workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        reserved.close()
