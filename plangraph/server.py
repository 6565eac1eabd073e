"""`plangraph serve`: the HTTP API (LangServe-compatible routes plus REST).

This module is imported by the CLI on every command, so FastAPI, uvicorn and langserve are
imported only when the server is actually built (`create_app` lives in plangraph.http_app).
"""

from __future__ import annotations

import argparse
import functools
import ipaddress
import logging
import os
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from plangraph.access_log import ACCESS_LOGGER
from plangraph.errors import UserFacingError

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["configure_serve", "create_app", "run_serve"]

MAX_PROCESSES = 64


def create_app(*args: Any, **kwargs: Any) -> FastAPI:
    """See `plangraph.http_app.create_app`."""
    from plangraph.http_app import create_app as _create_app

    return _create_app(*args, **kwargs)


def configure_serve(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph serve`."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="serve without API keys (loopback addresses only; every caller is one user)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        help=(
            "server processes sharing the port (default PLANGRAPH_HTTP_PROCESSES or 1). One process runs "
            "Python on one core at a time; set this to the number of cores + 1 to keep them all busy"
        ),
    )


def _processes(args: argparse.Namespace) -> int:
    """`--processes`, else PLANGRAPH_HTTP_PROCESSES, else 1 — checked, with what to do when wrong."""
    value: object = getattr(args, "processes", None)
    if value is None:
        raw = os.environ.get("PLANGRAPH_HTTP_PROCESSES", "").strip()
        if not raw:
            return 1
        try:
            value = int(raw)
        except ValueError:
            raise UserFacingError(
                f"PLANGRAPH_HTTP_PROCESSES={raw!r} 不是整数：设为 1 到 {MAX_PROCESSES} 之间的进程数（通常等于 CPU 核数）。"
            ) from None
    assert isinstance(value, int)
    if not 1 <= value <= MAX_PROCESSES:
        raise UserFacingError(
            f"进程数 {value} 不可用：--processes / PLANGRAPH_HTTP_PROCESSES 取 1 到 {MAX_PROCESSES}（通常等于 CPU 核数）。"
        )
    return value


def _warm_up() -> bool:
    """PLANGRAPH_WARM_UP: on unless 0 / false / no / off (plangraph/warm.py)."""
    raw = os.environ.get("PLANGRAPH_WARM_UP", "1").strip().lower()
    if raw in ("", "1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise UserFacingError(f"PLANGRAPH_WARM_UP={raw!r} 无法识别：设为 1（默认，启动时先预热）或 0（不预热）。")


def _worker_app(data_dir: str | None, insecure_no_auth: bool, warm_up: bool = False) -> FastAPI:
    """The app of one server process (module level, so that a spawned worker can unpickle it)."""
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO)  # one line per request, on stderr
    logging.getLogger("plangraph.warm").setLevel(logging.INFO)  # "warmed up in 2.4 s" at start-up
    return create_app(data_dir=data_dir, insecure_no_auth=insecure_no_auth, warm_up=warm_up)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    """Run the HTTP server until interrupted; prints the URL it listens on once it answers (after the warm-up)."""
    if args.insecure_no_auth and not _is_loopback(args.host):
        raise UserFacingError(
            f"--insecure-no-auth 只能用于本机地址（127.0.0.1 / ::1），不能用于 {args.host}。"
        )
    processes = _processes(args)
    warm_up = _warm_up()
    data_dir = getattr(args, "data_dir", None)
    try:
        # Built here in every case: a configuration error stops the command before it listens.
        app = _worker_app(data_dir, args.insecure_no_auth, warm_up)
    except ValueError as error:
        raise UserFacingError(f"无法启动服务：{error}") from None
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    if processes > 1:
        return _serve_processes(args, family, processes, data_dir, warm_up)
    import uvicorn

    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as error:
        sock.close()
        raise _cannot_listen(args, error) from None
    server = uvicorn.Server(uvicorn.Config(app, log_level="info", access_log=False))

    def report_ready() -> None:  # once it answers (after the warm-up), as --processes N does
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.started:
            _print_listening(sock, family, "")

    threading.Thread(target=report_ready, daemon=True).start()
    server.run(sockets=[sock])
    return 0


def _cannot_listen(args: argparse.Namespace, error: OSError) -> UserFacingError:
    return UserFacingError(f"无法监听 {args.host}:{args.port}（{error.strerror}）；换一个 --port。")


def _print_listening(sock: socket.socket, family: socket.AddressFamily, suffix: str) -> None:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"plangraph serve: listening on http://{shown}:{port}{suffix}", file=sys.stderr, flush=True)


def _serve_processes(
    args: argparse.Namespace,
    family: socket.AddressFamily,
    processes: int,
    data_dir: str | None,
    warm_up: bool,
) -> int:
    """`processes` server processes on one port (plangraph.serve_workers); the address is printed once all listen."""
    from plangraph.serve_workers import reserve_port, supervise

    try:
        reserved = reserve_port(args.host, args.port, family)
    except OSError as error:
        raise _cannot_listen(args, error) from None
    factory = functools.partial(_worker_app, data_dir, args.insecure_no_auth, warm_up)

    def serve() -> int:
        return supervise(
            reserved,
            processes,
            factory,
            lambda: _print_listening(reserved, family, f" ({processes} processes)"),
        )

    if os.environ.get("PLANGRAPH_CHROMA_URL", "").strip():
        return serve()  # the user's Chroma server: every worker uses it already
    # A local Chroma folder cannot be shared by processes (plangraph.serve_chroma): one server for all.
    from graphs.context import Context
    from plangraph.serve_chroma import shared_chroma

    try:
        with shared_chroma(Context(data_dir=data_dir).data_path if data_dir else Context().data_path) as url:
            print(
                f"plangraph serve: vectors of the {processes} processes in a Chroma server at {url}",
                file=sys.stderr,
            )
            os.environ["PLANGRAPH_CHROMA_URL"] = url  # the workers start with it (and restarted ones too)
            try:
                return serve()
            finally:
                os.environ.pop("PLANGRAPH_CHROMA_URL", None)
    except BaseException:
        reserved.close()
        raise
