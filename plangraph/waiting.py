"""`plangraph pending` and `plangraph remind`: plans waiting for a user's answer."""

from __future__ import annotations

import argparse

from plangraph.runner import UserFacingError

__all__ = ["configure_pending", "configure_remind", "run_pending", "run_remind"]


def configure_pending(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph pending`."""
    parser.add_argument("--user", default=None, help="only this user's plans")
    parser.add_argument("--json", action="store_true", help="JSON output")


def configure_remind(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph remind`."""
    parser.add_argument("--older-than", default="1h", help="age of a waiting plan, e.g. 30m, 1h, 2d")
    parser.add_argument("--hook", default=None, help="python callable 'pkg.mod:func' or a shell command")


def run_pending(args: argparse.Namespace) -> int:
    """List waiting plans."""
    raise UserFacingError("plangraph pending is being built; not available in this version.")


def run_remind(args: argparse.Namespace) -> int:
    """Remind waiting users."""
    raise UserFacingError("plangraph remind is being built; not available in this version.")
