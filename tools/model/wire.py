"""The chat model on the wire: bounded output, a fitted prompt, a wall-clock deadline, honest errors.

`WireChatOpenAI` is `ChatOpenAI` with what every OpenAI-compatible server (OpenAI, vLLM,
llama.cpp's `llama-server` and `llama_cpp.server`) needs to behave:

- the output bound of its kind of call is sent as `max_completion_tokens` and, to servers other
  than OpenAI's, also as `max_tokens` (llama.cpp reads only that one);
- every request is fitted into the context window before it is sent (`tools.model.window`);
- the whole call — connecting, waiting, and every streamed byte — ends by `deadline` seconds:
  `DeadlineTransport` (sync calls) and `AsyncDeadlineTransport` (ainvoke / astream, the async API)
  cut the connection then, however many keep-alive pings the server sends;
- failures become the errors of `tools.faults`: a 4xx quotes the server's own message and names
  the cause (context overflow, unknown model, bad key), an empty stream or a body that is not the
  API's JSON is a `ModelFaultError`, a cut call a `ModelDeadlineError`.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlparse

import httpx
import openai
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field, PrivateAttr

from tools.faults import ModelDeadlineError, ModelFaultError, ModelRejectedError
from tools.model.window import SAFE_CONTEXT, TokenGauge, fit_request, window_from_models

__all__ = [
    "AsyncDeadlineTransport",
    "DeadlineTransport",
    "Endpoint",
    "WireChatOpenAI",
    "call_deadline",
    "describe_rejection",
]

log = logging.getLogger("plangraph.model")

_call_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "model_call_deadline", default=None
)
# the response bodies of the current call (their first bytes), to tell an empty stream from garbage
_bodies: contextvars.ContextVar[list[_DeadlineStream | _AsyncDeadlineStream] | None] = contextvars.ContextVar(
    "model_bodies", default=None
)


@contextmanager
def call_deadline(until: float) -> Iterator[None]:
    """Model calls inside the block end by `until` (time.monotonic()) even when their own deadline is later."""
    token = _call_deadline.set(until)
    try:
        yield
    finally:
        _call_deadline.reset(token)


class _Cut(httpx.ReadTimeout):
    """Raised inside the transport when the deadline passed; becomes ModelDeadlineError."""

    def __init__(self) -> None:
        super().__init__("the model call reached its deadline")


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that ends with `_Cut` at the deadline; a timer shuts the socket of a stalled read."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float, sock: socket.socket | None) -> None:
        self._inner = inner
        self._deadline = deadline
        self._sock = sock
        self._cut = threading.Event()
        self.head = b""  # the first bytes of the body, quoted when they are not the API's events

    def _shut(self) -> None:
        self._cut.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed
                pass

    def __iter__(self) -> Iterator[bytes]:
        timer = threading.Timer(max(0.0, self._deadline - time.monotonic()), self._shut)
        timer.daemon = True
        timer.start()
        try:
            for chunk in self._inner:
                if self._cut.is_set() or time.monotonic() >= self._deadline:
                    raise _Cut
                if len(self.head) < 200:
                    self.head += chunk[: 200 - len(self.head)]
                yield chunk
        except (httpx.HTTPError, OSError) as error:
            if self._cut.is_set():
                raise _Cut from error
            raise
        finally:
            timer.cancel()

    def close(self) -> None:
        self._inner.close()


class DeadlineTransport(httpx.BaseTransport):
    """An HTTP transport whose every request ends `seconds` after it started, body included."""

    def __init__(
        self, seconds: float, inner: httpx.BaseTransport | None = None, verify: ssl.SSLContext | bool = True
    ) -> None:
        self.seconds = seconds
        # no keep-alive: each call has its own connection (closed with the response), so a cut
        # connection is never reused and no idle socket outlives the model object
        self._inner = inner or httpx.HTTPTransport(
            verify=verify, limits=httpx.Limits(max_keepalive_connections=0)
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` with every timeout capped to the time left, then bound its body."""
        deadline = _bounded(request, self.seconds)
        response = self._inner.handle_request(request)
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        assert isinstance(response.stream, httpx.SyncByteStream)
        body = _DeadlineStream(response.stream, deadline, sock)
        seen = _bodies.get()
        if seen is not None:
            seen.append(body)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=body,
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the pooled connections."""
        self._inner.close()


def _bounded(request: httpx.Request, seconds: float) -> float:
    """The deadline of a request sent now (`seconds`, or an enclosing `call_deadline`); caps its timeouts."""
    now = time.monotonic()
    deadline = now + seconds
    outer = _call_deadline.get()
    if outer is not None:
        deadline = min(deadline, outer)
    left = deadline - now
    if left <= 0:
        raise _Cut
    timeout = dict(request.extensions.get("timeout") or {})
    for key in ("connect", "read", "write", "pool"):
        value = timeout.get(key)
        timeout[key] = left if value is None else min(value, left)
    request.extensions = {**request.extensions, "timeout": timeout}
    return deadline


class _AsyncDeadlineStream(httpx.AsyncByteStream):
    """An async response body that ends with `_Cut` at the deadline, however often bytes (pings) arrive."""

    def __init__(self, inner: httpx.AsyncByteStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline
        self.head = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._inner.__aiter__()
        while True:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise _Cut
            try:
                async with asyncio.timeout(left):
                    chunk = await chunks.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError as error:  # asyncio's: the deadline passed during the read
                raise _Cut from error
            if len(self.head) < 200:
                self.head += chunk[: 200 - len(self.head)]
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class AsyncDeadlineTransport(httpx.AsyncBaseTransport):
    """`DeadlineTransport` for the async client: every request ends `seconds` after it started, body included."""

    def __init__(
        self,
        seconds: float,
        inner: httpx.AsyncBaseTransport | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.seconds = seconds
        self._inner = inner or httpx.AsyncHTTPTransport(
            verify=verify, limits=httpx.Limits(max_keepalive_connections=0)
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` with every timeout capped to the time left, then bound its body."""
        deadline = _bounded(request, self.seconds)
        try:
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                response = await self._inner.handle_async_request(request)
        except TimeoutError as error:
            raise _Cut from error
        assert isinstance(response.stream, httpx.AsyncByteStream)
        body = _AsyncDeadlineStream(response.stream, deadline)
        seen = _bodies.get()
        if seen is not None:
            seen.append(body)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=body,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._inner.aclose()


class Endpoint:
    """What is learned about one endpoint and model: its context window and how it counts tokens."""

    def __init__(self, base_url: str, model: str, api_key: str, window: int = 0) -> None:
        self.base_url = base_url
        self.model = model
        self._api_key = api_key
        self._window = window
        self._lock = threading.Lock()
        self.gauge = TokenGauge()
        self.forced_form: str | None = None  # the tool_choice form for one forced tool this server took
        self._tls: ssl.SSLContext | None = None

    def tls(self) -> ssl.SSLContext:
        """The TLS context of this endpoint's clients, made once (loading the CA bundle takes ~40 ms)."""
        with self._lock:
            if self._tls is None:
                self._tls = httpx.create_ssl_context()
            return self._tls

    def window(self) -> int:
        """The configured window, else the one `/v1/models` reports, else `SAFE_CONTEXT` (asked once)."""
        with self._lock:
            if self._window <= 0:
                self._window = self._discover() or SAFE_CONTEXT
            return self._window

    def _discover(self) -> int | None:
        url = (self.base_url or "https://api.openai.com/v1").rstrip("/") + "/models"
        try:
            answer = httpx.get(url, headers={"Authorization": f"Bearer {self._api_key}"}, timeout=5.0)
            found = window_from_models(answer.json(), self.model) if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as error:
            log.info("no context length from %s (%s); using %s", url, error, SAFE_CONTEXT)
            return None
        log.info("context window of %s at %s: %s", self.model, url, found or f"not reported, {SAFE_CONTEXT}")
        return found


def _is_openai(base_url: str) -> bool:
    return not base_url or (urlparse(base_url).hostname or "").endswith("openai.com")


def describe_rejection(error: openai.APIStatusError) -> ModelRejectedError:
    """A 4xx as the user should read it: the server's own words, the cause named, then what to do."""
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    quoted = str(inner.get("message") or error.message or "").strip()[:300]
    code = " ".join(str(inner.get(k) or "") for k in ("code", "type")).lower()
    status = error.status_code
    if status in (401, 403):
        kind, what, todo = "bad_key", "模型服务拒绝了密钥（无效或无权访问）", "请检查 OPENAI_API_KEY"
    elif status == 404 or "model_not_found" in code:
        kind, what, todo = (
            "unknown_model",
            "模型服务不认识这个模型",
            "请检查 PLANGRAPH_MODEL（服务的 /v1/models 列出可用的名称）",
        )
    elif "context" in code or status == 413:
        kind, what, todo = (
            "overflow",
            "请求超出了模型服务的上下文窗口",
            "请把 PLANGRAPH_MODEL_CONTEXT 设为模型服务实际的窗口大小，或调小 PLANGRAPH_TOKEN_BUDGET",
        )
    else:
        kind, what, todo = (
            "rejected",
            "模型服务拒绝了请求",
            "请检查 OPENAI_BASE_URL、PLANGRAPH_MODEL 和模型服务的日志",
        )
    return ModelRejectedError(
        f"{what}（HTTP {status}，服务返回：“{quoted}”）：{todo}", kind=kind, status=status
    )


def _translate(error: BaseException, seconds: float, head: bytes = b"") -> BaseException:
    """The tools.faults error for a failure inside a model call (the error itself when it is none of ours).

    `head` is the start of the response body, quoted when it is not the API's JSON.
    """
    causes = [error, error.__cause__, error.__context__]
    # every httpx timeout is capped to the time left, so any timeout is the deadline
    if any(
        isinstance(e, httpx.TimeoutException | openai.APITimeoutError | ModelDeadlineError) for e in causes
    ):
        return ModelDeadlineError(
            f"模型服务在 {seconds:g} 秒内没有答完，调用已被截断（PLANGRAPH_MODEL_TIMEOUT 限制整个调用，"
            "包括流式输出）；请检查模型服务是否过载，或调大 PLANGRAPH_MODEL_TIMEOUT"
        )
    if (
        isinstance(error, openai.APIStatusError)
        and 400 <= error.status_code < 500
        and error.status_code not in (408, 409, 429)
    ):
        return describe_rejection(error)
    if isinstance(error, json.JSONDecodeError | openai.APIResponseValidationError | ValueError):
        came = (
            f"开头是：{head[:80].decode(errors='replace')!r}"
            if head.strip()
            else f"{type(error).__name__}: {str(error)[:160]}"
        )
        return ModelFaultError(
            f"模型服务返回的内容不是 OpenAI 兼容的 JSON（{came}）；请检查 OPENAI_BASE_URL 是否指向 /v1 接口"
        )
    return error


_EMPTY = (
    "模型服务返回了空的回答（流中没有任何内容）；常见原因是请求超出了服务的上下文窗口"
    "（请把 PLANGRAPH_MODEL_CONTEXT 设为服务实际的窗口）或服务过载"
)


class WireChatOpenAI(ChatOpenAI):
    """ChatOpenAI with bounded output, fitted prompts, a whole-call deadline and errors that quote the server."""

    endpoint: Any = Field(default=None, exclude=True)
    """The `Endpoint` (window, token gauge); None = `SAFE_CONTEXT` and a fresh gauge."""
    deadline: float = 60.0
    """Seconds one call may take, streaming included (also set on the DeadlineTransport)."""
    _sent: tuple[list[BaseMessage], Any] | None = PrivateAttr(default=None)

    def _endpoint(self) -> Endpoint:
        if self.endpoint is None:
            self.endpoint = Endpoint(self.openai_api_base or "", self.model_name, "", SAFE_CONTEXT)
        return self.endpoint  # type: ignore[no-any-return]

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        messages = self._convert_input(input_).to_messages()
        endpoint = self._endpoint()
        bound = int(kwargs.pop("max_tokens", None) or self.max_tokens or 512)
        tools = kwargs.get("tools") or ()
        fitted, bound = fit_request(messages, tools, bound, endpoint.window(), endpoint.gauge)
        if len(fitted) != len(messages):
            log.info(
                "request fitted into %s tokens: %s of %s messages kept",
                endpoint.window(),
                len(fitted),
                len(messages),
            )
        payload = super()._get_request_payload(fitted, stop=stop, **kwargs)
        for message in payload.get("messages") or ():
            # an assistant turn that only calls tools has content null on OpenAI's wire;
            # llama_cpp.server refuses that (HTTP 500, "Input should be a valid string")
            if message.get("role") == "assistant" and message.get("content") is None:
                message["content"] = ""
        payload.pop("max_tokens", None)
        payload["max_completion_tokens"] = bound
        if not _is_openai(self.openai_api_base or ""):
            payload["max_tokens"] = bound  # llama.cpp servers read only this one
            if payload.get("temperature") is None:  # (OpenAI's reasoning models refuse one)
                payload["temperature"] = 0.2
        self._sent = (fitted, tools)  # for the gauge, when usage comes back
        return payload

    def _observe(self, usage: Any) -> None:
        sent = self._sent
        prompt = (usage or {}).get("input_tokens") if isinstance(usage, dict) else None
        if sent and isinstance(prompt, int):
            self._endpoint().gauge.observe(sent[0], sent[1], prompt)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        produced = False
        bodies: list[_DeadlineStream | _AsyncDeadlineStream] = []
        _bodies.set(bodies)
        try:
            for chunk in super()._stream(messages, stop, run_manager, **kwargs):
                produced = True
                self._observe(getattr(chunk.message, "usage_metadata", None))
                yield chunk
        except (_Cut, openai.APIError, ValueError, httpx.HTTPError) as error:
            raise _raised(error, self.deadline) from None
        if not produced:
            raise _nothing_came(bodies)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        produced = False
        bodies: list[_DeadlineStream | _AsyncDeadlineStream] = []
        _bodies.set(bodies)
        try:
            async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
                produced = True
                self._observe(getattr(chunk.message, "usage_metadata", None))
                yield chunk
        except (_Cut, openai.APIError, ValueError, httpx.HTTPError) as error:
            raise _raised(error, self.deadline) from None
        if not produced:
            raise _nothing_came(bodies)

    # Not streamed (a call with tools, `disable_streaming="tool_calling"`): `stream=False` is said
    # outright, as the payload's default is the model's `streaming=True`.
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        bodies: list[_DeadlineStream | _AsyncDeadlineStream] = []
        _bodies.set(bodies)
        try:
            result = super()._generate(messages, stop, run_manager, **{**kwargs, "stream": False})
        except (_Cut, openai.APIError, ValueError, httpx.HTTPError) as error:
            raise _raised(error, self.deadline, b"".join(b.head for b in bodies)) from None
        for generation in result.generations:
            self._observe(getattr(generation.message, "usage_metadata", None))
        return result

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        bodies: list[_DeadlineStream | _AsyncDeadlineStream] = []
        _bodies.set(bodies)
        try:
            result = await super()._agenerate(messages, stop, run_manager, **{**kwargs, "stream": False})
        except (_Cut, openai.APIError, ValueError, httpx.HTTPError) as error:
            raise _raised(error, self.deadline, b"".join(b.head for b in bodies)) from None
        for generation in result.generations:
            self._observe(getattr(generation.message, "usage_metadata", None))
        return result


def _raised(error: BaseException, seconds: float, head: bytes = b"") -> BaseException:
    """What a failed call raises: our error for it, else `error` itself (with its own traceback)."""
    translated = _translate(error, seconds, head)
    if translated is error:
        raise error
    return translated


def _nothing_came(bodies: list[_DeadlineStream | _AsyncDeadlineStream]) -> ModelFaultError:
    """The fault of a stream that produced no chunk: garbage (quoted) or an empty answer."""
    # keep-alive comments (": ping - …", llama_cpp.server) are not content
    lines = b"".join(b.head for b in bodies).splitlines()
    head = b"\n".join(line for line in lines if line.strip() and not line.startswith(b":"))
    if head and b"data:" not in head:
        return ModelFaultError(
            f"模型服务返回的内容不是 OpenAI 兼容的事件流（开头是：{head[:80].decode(errors='replace')!r}）；"
            "请检查 OPENAI_BASE_URL 是否指向 /v1 接口"
        )
    return ModelFaultError(_EMPTY)
