"""ASGI middleware in front of every route: request size limit, API key → user, per-key rate limit."""

from __future__ import annotations

import hmac
import logging
import uuid
from collections.abc import Mapping, Sequence
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote, unquote

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plangraph.auth import RateLimiter

__all__ = ["KEY_COOKIE", "LOGIN_PATH", "Guard", "json_error"]

# A browser cannot add X-API-Key to the chat page's own requests: /login takes the key once and
# keeps it in an HttpOnly, SameSite=Strict cookie (other sites' pages cannot send it).
KEY_COOKIE = "plangraph_key"
LOGIN_PATH = "/login"
_LOGIN_PAGE = """<!doctype html><meta charset="utf-8"><title>plangraph</title>
<form method="post" action="/login" style="font-family:sans-serif;margin:4em auto;max-width:28em">
<p>{message}</p><label>API key <input name="key" type="password" autofocus required></label>
<button>登录 / Sign in</button></form>"""

log = logging.getLogger("plangraph.http")


def json_error(status: int, detail: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The one error shape of the API: `{"detail": "..."}` (as FastAPI's own errors)."""
    return JSONResponse({"detail": detail}, status_code=status, headers=dict(headers or {}))


class _TooLarge(Exception):
    pass


class Guard:
    """Rejects oversized bodies (413), missing or unknown keys (401) and bursts over the limit (429).

    An unexpected exception becomes a JSON 500 with a reference; the trace goes to the log only.

    The user of the key is put in `request.state.user_id`. Paths starting with one of `public`
    need no key; with no keys configured every caller is `anonymous_user`.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        keys: Mapping[str, str],
        anonymous_user: str | None,
        limiter: RateLimiter,
        max_bytes: int,
        public: Sequence[str],
    ) -> None:
        """Wrap `app`; `max_bytes` <= 0 turns the size limit off."""
        self.app = app
        self.keys = [(key.encode(), user) for key, user in keys.items()]
        self.anonymous_user = anonymous_user
        self.limiter = limiter
        self.max_bytes = max_bytes
        self.public = tuple(public)

    def _user(self, key: str | None) -> str | None:
        if self.anonymous_user is not None:
            return self.anonymous_user
        if not key:
            return None
        given = key.encode("utf-8", "replace")
        found = None
        for known, user in self.keys:  # compare every key in constant time
            if hmac.compare_digest(known, given):
                found = user
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, then pass it on with a receive() that enforces the size limit."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        length = headers.get("content-length", "")
        if self.max_bytes > 0 and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(scope, receive, send, 413, self._too_large())
            return
        if scope["path"] in (LOGIN_PATH, LOGIN_PATH + "/"):
            await self._login(scope, receive, send)
            return
        if not scope["path"].startswith(self.public):
            key = headers.get("x-api-key") or _cookie_key(headers)
            user = self._user(key)
            if user is None:
                detail = "Missing X-API-Key header." if not key else "Unknown API key."
                await self._reject(scope, receive, send, 401, detail)
                return
            wait = self.limiter.acquire(key or "anonymous")
            if wait:
                detail = f"Rate limit of {self.limiter.per_minute:g} requests/minute reached; retry later."
                await self._reject(scope, receive, send, 429, detail, {"Retry-After": str(int(wait))})
                return
            scope.setdefault("state", {})["user_id"] = user
        await self._pass(scope, receive, send)

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        """GET: the sign-in form; POST key=…: the key cookie and a redirect to the chat page."""
        response: Response
        if scope["method"] != "POST":
            response = HTMLResponse(_LOGIN_PAGE.format(message="输入 API key 登录 plangraph。"))
        elif not self.keys:
            response = json_error(400, "No API keys are configured; the server accepts every caller.")
        else:
            client = (scope.get("client") or ("unknown",))[0]
            wait = self.limiter.acquire(f"login:{client}")
            key = await _form_field(receive, "key", limit=4096)
            if wait:
                response = json_error(
                    429, "Too many sign-in attempts; retry later.", {"Retry-After": str(int(wait))}
                )
            elif key and self._user(key) is not None:
                response = RedirectResponse("/", status_code=303)  # the chat page
                response.set_cookie(
                    KEY_COOKIE, quote(key, safe=""), max_age=8 * 3600, httponly=True, samesite="strict"
                )
            else:
                page = _LOGIN_PAGE.format(message="API key 不正确，请重新输入。")
                response = HTMLResponse(page, status_code=401)
        await response(scope, receive, send)

    async def _pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        seen, started, finished = 0, False, False

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if self.max_bytes > 0 and seen > self.max_bytes:
                raise _TooLarge
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started, finished
            started = started or message["type"] == "http.response.start"
            finished = message["type"] == "http.response.body" and not message.get("more_body", False)
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except _TooLarge:
            if started:
                raise
            await json_error(413, self._too_large())(scope, receive, send)
        except Exception as error:
            ref = uuid.uuid4().hex[:8]
            log.error("%s %s failed (ref %s)", scope["method"], scope["path"], ref, exc_info=error)
            if not started:
                detail = f"Internal error (ref {ref}); the server log has the details."
                await json_error(500, detail)(scope, receive, send)
            elif not finished:  # a stream already sent its error event: end the body cleanly
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _too_large(self) -> str:
        return f"Request body is larger than {self.max_bytes} bytes; send less (PLANGRAPH_MAX_REQUEST_BYTES)."

    async def _reject(
        self, scope: Scope, receive: Receive, send: Send, status: int, detail: str, headers: Any = None
    ) -> None:
        await json_error(status, detail, headers)(scope, receive, send)


def _cookie_key(headers: Headers) -> str | None:
    """The API key a signed-in browser sends in the `KEY_COOKIE` cookie."""
    raw = headers.get("cookie")
    if not raw:
        return None
    cookie = SimpleCookie()
    try:
        cookie.load(raw)
    except CookieError:  # a malformed Cookie header simply carries no key
        return None
    morsel = cookie.get(KEY_COOKIE)
    return unquote(morsel.value) if morsel and morsel.value else None


async def _form_field(receive: Receive, name: str, limit: int) -> str | None:
    """One field of an urlencoded form body (None when absent or the body exceeds `limit` bytes)."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            break
    values = parse_qs(body.decode("utf-8", "replace")).get(name)
    return values[0] if values else None
