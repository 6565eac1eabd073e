"""`plangraph serve`: the HTTP API (LangServe-compatible routes plus REST).

This module is imported by the CLI on every command, so FastAPI, uvicorn and langserve are
imported only when the server is actually built (`create_app` lives in plangraph.http_app).
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import socket
import sys
from typing import TYPE_CHECKING, Any

from plangraph.access_log import ACCESS_LOGGER
from plangraph.errors import UserFacingError

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["configure_serve", "create_app", "run_serve"]


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


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    """Run the HTTP server until interrupted; prints the URL it listens on once it is bound."""
    if args.insecure_no_auth and not _is_loopback(args.host):
        raise UserFacingError(
            f"--insecure-no-auth 只能用于本机地址（127.0.0.1 / ::1），不能用于 {args.host}。"
        )
    try:
        app = create_app(data_dir=getattr(args, "data_dir", None), insecure_no_auth=args.insecure_no_auth)
    except ValueError as error:
        raise UserFacingError(f"无法启动服务：{error}") from None
    import uvicorn

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as error:
        sock.close()
        raise UserFacingError(
            f"无法监听 {args.host}:{args.port}（{error.strerror}）；换一个 --port。"
        ) from None
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"plangraph serve: listening on http://{shown}:{port}", file=sys.stderr, flush=True)
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO)  # one line per request, on stderr
    server = uvicorn.Server(uvicorn.Config(app, log_level="info", access_log=False))
    server.run(sockets=[sock])
    return 0
