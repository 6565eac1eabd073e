"""Helpers of the HTTP tests: a real uvicorn server on a free 127.0.0.1 port (in a thread), SSE parsing."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

KEY_ALICE, KEY_BOB = "key-alice-0123456789", "key-bob-0123456789"
KEYS = {KEY_ALICE: "alice", KEY_BOB: "bob"}


@dataclass
class Live:
    """A running server: its base URL and data dir."""

    url: str
    data_dir: Any

    def client(self, key: str | None = KEY_ALICE, timeout: float = 120) -> httpx.Client:
        """An httpx client with `key` as X-API-Key (None: no key)."""
        headers = {"X-API-Key": key} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on a free 127.0.0.1 port in a thread; yield its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start (see the log above)")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def human(text: str) -> dict[str, Any]:
    """Input of a new request."""
    return {"messages": [{"type": "human", "content": text}]}


def sse(response: httpx.Response) -> list[tuple[str, Any]]:
    """(event, decoded data or None) pairs of a server-sent-event response, in order."""
    events: list[tuple[str, Any]] = []
    event, data = "message", None
    for line in [*response.iter_lines(), ""]:
        if line.startswith("event:"):
            event = line[len("event:") :].strip()
        elif line.startswith("data:"):
            raw = line[len("data:") :].strip()
            data = json.loads(raw) if raw else None
        elif not line and (event != "message" or data is not None):
            events.append((event, data))
            event, data = "message", None
    return events
