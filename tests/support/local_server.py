"""Helpers for tests that start a real server process on 127.0.0.1: ports, readiness, shutdown, skips."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["backend_missing", "free_port", "in_ci", "listening_url", "stop_process", "wait_until_ready"]


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now (never hard-code one: 2024 is taken here)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening_url(proc: subprocess.Popen, seen: list[str] | None = None) -> str:
    """The URL `plangraph serve` prints once it answers (uvicorn's own lines come before it).

    The lines read before it are appended to `seen` when given.
    """
    assert proc.stderr is not None
    lines = seen if seen is not None else []
    for line in proc.stderr:
        if found := re.search(r"listening on (http://127\.0\.0\.1:\d+)", line):
            return found.group(1)
        lines.append(line)
    raise AssertionError(f"plangraph serve ended without listening (exit {proc.wait()}):\n{''.join(lines)}")


def in_ci() -> bool:
    """True in CI (`CI=true`), where a missing backend is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def backend_missing(reason: str) -> None:
    """Skip locally with `reason`; in CI fail with it (CI must test every backend)."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: backends are never skipped; install them in .ci/run)")
    pytest.skip(reason)


def _tail(log: Path, lines: int = 60) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError as error:
        return f"(no log: {error})"
    return "\n".join(text.splitlines()[-lines:])


def wait_until_ready(
    proc: subprocess.Popen, ready: Callable[[], bool], log: Path, what: str, timeout: float
) -> None:
    """Poll `ready()` until it is true; raise with the server log if the process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"{what} exited with code {proc.returncode} before it was ready. Log:\n{_tail(log)}"
            )
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} was not ready after {timeout:.0f}s. Log:\n{_tail(log)}")


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 15.0) -> None:
    """Stop the process group started with `start_new_session=True` (the server and its children)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout)
