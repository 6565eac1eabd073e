"""ASGI middleware in front of every route: request size limit, API key → user, per-key rate limit."""

from __future__ import annotations

import hmac
import logging
import math
import uuid
from collections.abc import Mapping, Sequence
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plangraph.auth import FailureLimiter, RateLimiter, SessionStore
from plangraph.http_body import BodyError, batch_size, check_body

__all__ = ["LOGIN_PATH", "LOGOUT_PATH", "SESSION_COOKIE", "Guard", "json_error"]

# A browser cannot add X-API-Key to the chat page's own requests: /login takes the key once and
# sets a cookie holding a random session id (the key stays on the server side: SessionStore),
# HttpOnly, SameSite=Strict, Secure over TLS. Cookie-authenticated requests that change state must
# come from the server's own origin (Origin, else Referer), as must a sign-in (login CSRF).
SESSION_COOKIE = "plangraph_session"
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_LOGIN_PAGE = """<!doctype html><meta charset="utf-8"><title>plangraph</title>
<form method="post" action="/login" style="font-family:sans-serif;margin:4em auto;max-width:28em">
<p>{message}</p><label>API key <input name="key" type="password" autofocus required></label>
<button>登录 / Sign in</button></form>"""
_LOGOUT_PAGE = """<!doctype html><meta charset="utf-8"><title>plangraph</title>
<form method="post" action="/logout" style="font-family:sans-serif;margin:4em auto;max-width:28em">
<button>退出登录 / Sign out</button></form>"""

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
        failures: FailureLimiter | None = None,
        sessions: SessionStore | None = None,
        uploads: tuple[str, int] | None = None,
    ) -> None:
        """Wrap `app`; `max_bytes` <= 0 turns the size limit off.

        `uploads` = (path prefix, bytes): PUTs under that prefix (file uploads) have this limit instead.
        """
        self.app = app
        self.keys = [(key.encode(), user) for key, user in keys.items()]
        self.key_users = {SessionStore.digest(key): user for key, user in keys.items()}
        self.anonymous_user = anonymous_user
        self.limiter = limiter
        self.failures = failures or FailureLimiter()
        self.sessions = sessions
        self.max_bytes = max_bytes
        self.uploads = uploads
        self.public = tuple(public)

    def _user(self, key: str | None) -> str | None:
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
        limit = self._limit(scope)
        if limit > 0 and length.isdigit() and int(length) > limit:
            await self._reject(scope, receive, send, 413, self._too_large(limit))
            return
        if scope["path"] in (LOGIN_PATH, LOGIN_PATH + "/"):
            await self._login(scope, receive, send)
            return
        if scope["path"] in (LOGOUT_PATH, LOGOUT_PATH + "/"):
            await self._logout(scope, receive, send)
            return
        if not scope["path"].startswith(self.public):
            refusal = self._authenticate(scope, headers)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self._pass(scope, receive, send)

    def _authenticate(self, scope: Scope, headers: Headers) -> Response | None:
        """Put the caller's user into the scope, or return the refusal (401/403/429)."""
        client = _client(scope)
        key = headers.get("x-api-key")
        session = None if key else _cookie(headers, SESSION_COOKIE)
        if self.anonymous_user is not None:
            user: str | None = self.anonymous_user
            bucket = "anonymous"
        elif key:
            user, bucket = self._user(key), SessionStore.digest(key)
        elif session and self.sessions is not None:
            found = self.sessions.lookup(session)
            user = self.key_users.get(found[1]) if found else None  # a removed key ends its sessions
            bucket = found[1] if found else ""
        else:
            user, bucket = None, ""
        if user is None:
            if not key and not session:
                return json_error(401, "Missing X-API-Key header.")
            wait = self.failures.wait(client)
            if wait:
                return _too_many_failures(wait)
            self.failures.failed(client)
            detail = "Unknown API key." if key else "Your session has ended; sign in again at /login."
            return json_error(401, detail)
        # Without a key, a browser may be the caller: a state change must come from our own pages
        # (a cookie session must say so; anonymous use on loopback refuses only another origin).
        cross_site = not _same_origin(scope, headers, required=self.anonymous_user is None)
        if not key and scope["method"] not in _SAFE_METHODS and cross_site:
            return json_error(
                403,
                "Cross-site request refused: a request signed in by cookie must come from this server's own "
                "pages (its Origin or Referer did not match). Scripts should send X-API-Key instead.",
            )
        wait = self.limiter.acquire(bucket)
        if wait:
            detail = f"Rate limit of {self.limiter.per_minute:g} requests/minute reached; retry later."
            return json_error(429, detail, {"Retry-After": str(int(wait))})
        scope.setdefault("state", {})["user_id"] = user
        scope["state"]["rate_bucket"] = bucket
        return None

    async def _login(self, scope: Scope, receive: Receive, send: Send) -> None:
        """GET: the sign-in form; POST key=…: a session cookie and a redirect to the chat page."""
        headers = Headers(scope=scope)
        response: Response
        if scope["method"] != "POST":
            response = HTMLResponse(_LOGIN_PAGE.format(message="输入 API key 登录 plangraph。"))
        elif not self.keys or self.sessions is None:
            response = json_error(400, "No API keys are configured; the server accepts every caller.")
        elif not _same_origin(scope, headers, required=False):
            response = json_error(
                403, "Cross-site sign-in refused: sign in from this server's own /login page."
            )
        else:
            client = _client(scope)
            key = await _form_field(receive, "key", limit=4096)
            user = self._user(key)
            wait = 0.0 if user is not None else self.failures.wait(client)
            if wait:
                response = _too_many_failures(wait)
            elif key and user is not None:
                response = RedirectResponse("/", status_code=303)  # the chat page
                response.set_cookie(
                    SESSION_COOKIE,
                    self.sessions.create(user, key),
                    max_age=int(self.sessions.lifetime),
                    httponly=True,
                    samesite="strict",
                    secure=scope.get("scheme") == "https",
                )
            else:
                self.failures.failed(client)
                page = _LOGIN_PAGE.format(message="API key 不正确，请重新输入。")
                response = HTMLResponse(page, status_code=401)
        await response(scope, receive, send)

    async def _logout(self, scope: Scope, receive: Receive, send: Send) -> None:
        """GET: a sign-out button; POST: end the session on the server and clear the cookie."""
        headers = Headers(scope=scope)
        response: Response
        if scope["method"] != "POST":
            response = HTMLResponse(_LOGOUT_PAGE)
        elif not _same_origin(scope, headers, required=False):
            response = json_error(403, "Cross-site sign-out refused.")
        else:
            session = _cookie(headers, SESSION_COOKIE)
            if session and self.sessions is not None:
                self.sessions.end(session)
            response = RedirectResponse(LOGIN_PATH, status_code=303)
            response.delete_cookie(
                SESSION_COOKIE, httponly=True, samesite="strict", secure=scope.get("scheme") == "https"
            )
        await response(scope, receive, send)

    async def _checked_body(self, scope: Scope, receive: Receive) -> tuple[Receive | None, Response | None]:
        """For a POST to a LangServe route: read and check the body (422 / 413 / 429), then replay it."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return receive, None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if self.max_bytes > 0 and size > self.max_bytes:
                return None, json_error(413, self._too_large())
            if not message.get("more_body", False):
                break
        raw = b"".join(chunks)
        try:
            body = check_body(scope["path"], raw)
        except BodyError as error:
            return None, json_error(422, f"Unusable request body: {error}.")
        extra = batch_size(body) - 1  # the request itself took one from the bucket already
        if extra > 0:
            never = 0 < self.limiter.per_minute < extra + 1
            wait = math.inf if never else self.limiter.acquire(scope["state"]["rate_bucket"], extra)
            if wait:
                detail = (
                    f"A batch of {extra + 1} inputs counts as {extra + 1} requests; the rate limit is "
                    f"{self.limiter.per_minute:g} requests/minute."
                    + (" Send fewer inputs per batch." if wait == math.inf else " Retry later.")
                )
                retry = {} if wait == math.inf else {"Retry-After": str(int(wait))}
                return None, json_error(429, detail, retry)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        return replay, None

    async def _pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST" and scope["path"].startswith("/plangraph/") and "state" in scope:
            checked, refusal = await self._checked_body(scope, receive)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
            assert checked is not None
            receive = checked
        seen, started, finished = 0, False, False
        limit = self._limit(scope)

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if limit > 0 and seen > limit:
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
            await json_error(413, self._too_large(limit))(scope, receive, send)
        except Exception as error:
            ref = uuid.uuid4().hex[:8]
            log.error("%s %s failed (ref %s)", scope["method"], scope["path"], ref, exc_info=error)
            if not started:
                detail = f"Internal error (ref {ref}); the server log has the details."
                await json_error(500, detail)(scope, receive, send)
            elif not finished:  # a stream already sent its error event: end the body cleanly
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _limit(self, scope: Scope) -> int:
        """The body limit of this request: the upload limit for a file upload, else max_bytes."""
        if self.uploads and scope["method"] == "PUT" and scope["path"].startswith(self.uploads[0]):
            return self.uploads[1]
        return self.max_bytes

    def _too_large(self, limit: int | None = None) -> str:
        if limit is not None and self.uploads and limit == self.uploads[1] != self.max_bytes:
            return f"The file is larger than {limit} bytes (PLANGRAPH_MAX_UPLOAD_BYTES); split it or raise the limit."
        return f"Request body is larger than {self.max_bytes} bytes; send less (PLANGRAPH_MAX_REQUEST_BYTES)."

    async def _reject(
        self, scope: Scope, receive: Receive, send: Send, status: int, detail: str, headers: Any = None
    ) -> None:
        await json_error(status, detail, headers)(scope, receive, send)


def _cookie(headers: Headers, name: str) -> str | None:
    """The value of cookie `name` (None when absent or the Cookie header is malformed)."""
    raw = headers.get("cookie")
    if not raw:
        return None
    cookie = SimpleCookie()
    try:
        cookie.load(raw)
    except CookieError:  # a malformed Cookie header simply carries no session
        return None
    morsel = cookie.get(name)
    return morsel.value if morsel and morsel.value else None


def _client(scope: Scope) -> str:
    return str((scope.get("client") or ("unknown",))[0])


def _too_many_failures(wait: float) -> Response:
    seconds = max(1, int(wait + 0.999))
    return json_error(
        429,
        f"Too many failed sign-ins or unknown API keys from your address; retry in {seconds} s.",
        {"Retry-After": str(seconds)},
    )


def _origin(url: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port


def _same_origin(scope: Scope, headers: Headers, required: bool = True) -> bool:
    """True when Origin (else Referer) names this server; without either, `not required`."""
    claimed = headers.get("origin")
    if not claimed or claimed == "null":
        claimed = headers.get("referer")
    if not claimed:
        return not required
    own = _origin(f"{scope.get('scheme', 'http')}://{headers.get('host', '')}")
    return own is not None and _origin(claimed) == own


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
