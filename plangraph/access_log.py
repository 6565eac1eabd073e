"""One access-log line per HTTP request: method, path, status, milliseconds, user — never the key.

Add `AccessLog` outside the API-key guard: the guard puts the key's user in the request state,
which this middleware reads after the response. The query string is left out (it is the one
part of a request line a client might put a secret in); headers and bodies are never logged.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports this module (for the logger name) on every command
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ACCESS_LOGGER", "AccessLog"]

ACCESS_LOGGER = "plangraph.access"
log = logging.getLogger(ACCESS_LOGGER)


class AccessLog:
    """`GET /plans/p1 200 12.3ms user=alice` at INFO on the `plangraph.access` logger."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Time the request and log it once its response is finished (or has failed)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # what the client gets when the app raises before it started a response

        async def noting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noting_send)
        finally:
            user = (scope.get("state") or {}).get("user_id") or "-"
            ms = (time.perf_counter() - start) * 1000
            log.info("%s %s %d %.1fms user=%s", scope["method"], scope["path"], status, ms, user)
