"""`plangraph serve`: the HTTP API (LangServe-compatible routes plus REST)."""

from __future__ import annotations

import argparse

from plangraph.runner import UserFacingError

__all__ = ["configure_serve", "run_serve"]


def configure_serve(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph serve`."""
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)


def run_serve(args: argparse.Namespace) -> int:
    """Run the HTTP server until interrupted."""
    raise UserFacingError("plangraph serve is being built; not available in this version.")
