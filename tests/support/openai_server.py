"""A real OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script, for tests.

It serves ``POST /v1/chat/completions`` (JSON, or SSE when ``stream`` is true, tool calls
included), ``POST /v1/embeddings`` and ``GET /v1/models`` from a stdlib
``ThreadingHTTPServer`` on a free port, so ``langchain_openai.ChatOpenAI`` and the ``openai``
client run their real HTTP path. Usage (``search_block`` is any ``@tool``)::

    script = [
        reply_tool_call("search_block", {"query": "装机容量"}),
        fault_status(500, retry_after=0.01),  # one server error, retried by the client
        reply_text("装机容量为 500kW。"),
    ]
    with ScriptedOpenAIServer(script) as server:
        model = server.chat_model(max_retries=1).bind_tools([search_block])
        ask = model.invoke("装机容量是多少？")  # ask.tool_calls[0]["id"] == "call_1_0"
        done = model.invoke(["装机容量是多少？", ask, ToolMessage("500kW", tool_call_id="call_1_0")])
    assert done.content == "装机容量为 500kW。" and len(server.requests) == 3
    assert server.requests[-1]["messages"][-1]["role"] == "tool"

Each chat request takes the next script item: a `Reply` (see the ``reply_*`` and ``fault_*``
helpers) or a callable ``(request_json) -> Reply``; when the queue is empty the ``responder``
answers, and without one the server returns HTTP 500 "script exhausted" with
``x-should-retry: false`` so the client fails at once instead of retrying or hanging.

What the server checks like the real API (HTTP 400, no script item used): every assistant
``tool_calls`` id is answered by a ``tool`` message right after it, and no ``tool`` message is
orphaned. A scripted tool call naming a tool the request did not bind is a script bug
(HTTP 500) unless it comes from `reply_unknown_tool_call`. Responder exceptions, unknown-tool
mistakes and exhaustion are kept in ``.errors`` and raised as `ScriptError` when the ``with``
block ends (``strict=False`` turns that off).

Token counts in ``usage`` (`count_tokens`): each CJK character or full-width punctuation mark
is 1 token, every other whitespace-separated run is ``ceil(len / 4)`` tokens. A message costs
4 tokens plus its text content plus its tool-call names and arguments; ``prompt_tokens`` sums
the messages (tool schemas are not counted).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "Reply",
    "Responder",
    "ScriptError",
    "ScriptedOpenAIServer",
    "ScriptedToolCall",
    "count_tokens",
    "fault_delay",
    "fault_empty_stream",
    "fault_garbage_body",
    "fault_keepalive_stall",
    "fault_pings_only",
    "fault_status",
    "fault_truncated_stream",
    "hash_embedding",
    "message_tokens",
    "prompt_tokens",
    "reply_malformed_tool_call",
    "reply_text",
    "reply_tool_call",
    "reply_tool_calls",
    "reply_unknown_tool_call",
    "tool_pairing_error",
]


class ScriptError(AssertionError):
    """The script and the requests did not match (exhausted, responder crashed, unknown tool)."""


@dataclass(frozen=True)
class ScriptedToolCall:
    """One tool call the scripted model makes; `arguments` is the raw JSON text sent on the wire."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One scripted answer to a chat request: content and/or tool calls, or a fault.

    `status` other than 200 sends `error` as the JSON body with `headers`; `delay` waits before
    answering (to trip client timeouts); `truncated` closes the connection mid-body;
    `empty_stream` answers 200 with a stream of no events (what llama_cpp.server does on a context
    overflow); `raw_body` sends those bytes as the 200 body instead of the API's JSON; `stall`
    keeps a stream open that long after its first chunk (with `empty_stream`: before any event,
    then ends it empty), sending an SSE comment (`: ping - <time>`) every `ping_every` seconds, as
    servers' keep-alive does (llama_cpp.server's sse-starlette sends exactly these).
    """

    content: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    status: int = 200
    error: Mapping[str, Any] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    truncated: bool = False
    allow_unknown_tools: bool = False
    empty_stream: bool = False
    raw_body: bytes | None = None
    stall: float = 0.0
    ping_every: float = 0.0


Responder = Callable[[dict[str, Any]], Reply]
ToolCallSpec = ScriptedToolCall | tuple[str, Mapping[str, Any]] | tuple[str, Mapping[str, Any], str]


def reply_text(text: str) -> Reply:
    """The model answers with plain text."""
    return Reply(content=text)


def reply_tool_call(name: str, args: Mapping[str, Any], id: str | None = None) -> Reply:
    """The model calls one tool; the id is generated (``call_<request>_<index>``) unless given."""
    return reply_tool_calls([ScriptedToolCall(name, _dumps(args), id)])


def reply_tool_calls(calls: Iterable[ToolCallSpec], content: str | None = None) -> Reply:
    """The model calls several tools in one message: `ScriptedToolCall`s or ``(name, args[, id])``."""
    parsed = []
    for call in calls:
        if isinstance(call, ScriptedToolCall):
            parsed.append(call)
        else:
            parsed.append(ScriptedToolCall(call[0], _dumps(call[1]), call[2] if len(call) == 3 else None))
    if not parsed:
        raise ValueError("reply_tool_calls needs at least one call; use reply_text for a plain answer")
    return Reply(content=content, tool_calls=tuple(parsed))


def reply_malformed_tool_call(name: str, raw_arguments: str, id: str | None = None) -> Reply:
    """The model calls `name` with arguments that are not valid JSON (sent verbatim)."""
    return Reply(tool_calls=(ScriptedToolCall(name, raw_arguments, id),))


def reply_unknown_tool_call(name: str, args: Mapping[str, Any] | None = None) -> Reply:
    """The model calls a tool the request did not bind (a fault, so the server allows it)."""
    return replace(reply_tool_call(name, args or {}), allow_unknown_tools=True)


def fault_status(
    code: int,
    body: str | Mapping[str, Any] | None = None,
    *,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """The server answers HTTP `code` with an OpenAI-style error body (a message string or a full body).

    `retry_after` (seconds) sends ``Retry-After`` and ``retry-after-ms``, which the openai client
    honours between retries; small values keep retry tests fast.
    """
    if code == 200:
        raise ValueError("fault_status needs an error code (4xx/5xx); use reply_text for a success")
    if body is None or isinstance(body, str):
        kind = "server_error" if code >= 500 else "invalid_request_error"
        message = body or f"scripted fault: HTTP {code}"
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    extra = dict(headers or {})
    if retry_after is not None:
        extra["Retry-After"] = str(math.ceil(retry_after))
        extra["retry-after-ms"] = str(round(retry_after * 1000))
    return Reply(status=code, error=body, headers=tuple(extra.items()))


def fault_delay(seconds: float, then: Reply | None = None) -> Reply:
    """Wait `seconds` before answering with `then` (an empty text by default); trips client timeouts."""
    return replace(then or reply_text(""), delay=seconds)


def fault_empty_stream() -> Reply:
    """HTTP 200 with a stream that carries no event at all (llama_cpp.server's answer to an overflow)."""
    return Reply(empty_stream=True)


def fault_garbage_body(body: bytes = b"<html><body>502 Bad Gateway</body></html>") -> Reply:
    """HTTP 200 whose body is not the API's JSON (sent as is, streamed or not)."""
    return Reply(raw_body=body)


def fault_keepalive_stall(seconds: float, ping_every: float = 0.2, then: Reply | None = None) -> Reply:
    """Start streaming `then` (a text by default), then stall `seconds` sending ``: ping`` comments."""
    return replace(then or reply_text("好的，"), stall=seconds, ping_every=ping_every)


def fault_pings_only(seconds: float, ping_every: float = 0.1) -> Reply:
    """A stream that sends only ``: ping`` comments for `seconds`, then ends with no event at all.

    llama_cpp.server pings like this while it processes a long prompt; a large `seconds` is a server
    that pings forever (the handler stops when the server does).
    """
    return Reply(empty_stream=True, stall=seconds, ping_every=ping_every)


def fault_truncated_stream(partial_text: str) -> Reply:
    """Send `partial_text` then close the connection without finishing the body (or ``[DONE]``)."""
    return Reply(content=partial_text, truncated=True)


_CJK_CHAR = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def count_tokens(text: str) -> int:
    """Documented stand-in for a tokenizer: 1 per CJK character, ``ceil(len/4)`` per other word."""
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + sum(math.ceil(len(word) / 4) for word in _CJK_CHAR.sub(" ", text).split())


def message_tokens(message: Mapping[str, Any]) -> int:
    """Tokens of one wire message: 4 + text content + tool-call names and arguments."""
    content = message.get("content")
    if isinstance(content, list):  # content parts; only text parts count
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    total = 4 + count_tokens(content or "")
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        total += count_tokens(function.get("name", "")) + count_tokens(function.get("arguments", ""))
    return total


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """The ``usage.prompt_tokens`` the server reports for these messages."""
    return sum(message_tokens(message) for message in messages)


def tool_pairing_error(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The real API's complaint about tool-call pairing in `messages`, or None when they pair up."""
    pending: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return (
                    f"Invalid parameter: messages with role 'tool' must be a response to a preceding "
                    f"message with 'tool_calls' (tool_call_id {call_id!r} answers no pending call)."
                )
            pending.remove(call_id)
            continue
        if pending:
            break
        pending = [call.get("id") for call in message.get("tool_calls") or ()]
    if pending:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding to "
            f"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            f"{', '.join(map(str, pending))}"
        )
    return None


def hash_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector derived from a hash of `text` (equal texts, equal vectors)."""
    raw = b""
    counter = 0
    while len(raw) < 4 * dimensions:
        raw += hashlib.blake2b(f"{counter}:{text}".encode(), digest_size=64).digest()
        counter += 1
    values = [v / 2**31 - 1.0 for v in struct.unpack(f"<{dimensions}I", raw[: 4 * dimensions])]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _error_reply(status: int, message: str, kind: str) -> Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Reply(status=status, error=body, headers=(("x-should-retry", "false"),))


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class ScriptedOpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1:<free port>`` answering chat requests from a script.

    Use it as a context manager (or `start` / `stop`). `requests` holds every chat-completion
    body in arrival order (rejected ones too), `embedding_requests` every embeddings body.
    `stream_chunk_chars` is the size of each streamed text piece and tool-argument fragment;
    `prompt_counter` computes ``usage.prompt_tokens`` from the wire messages (default
    `prompt_tokens`; pass your own to match the budget counter of the code under test).
    Like real servers: with `api_key` a request with another bearer key gets 401
    (``invalid_api_key``); with `reject_unknown_models` a model not in `models` gets 404
    (``model_not_found``); `context_length` is reported in ``/v1/models`` (as vLLM's
    ``max_model_len``) and a request whose `prompt_counter` tokens plus ``max_tokens`` exceed it
    gets llama-server's 400 (``exceed_context_size_error``, "request (N tokens) exceeds the
    available context size (M tokens)"). Such rejections use no script item.
    """

    def __init__(
        self,
        script: Iterable[Reply | Responder] = (),
        *,
        responder: Responder | None = None,
        embedding_dim: int = 16,
        stream_chunk_chars: int = 4,
        models: Sequence[str] = ("scripted",),
        prompt_counter: Callable[[Sequence[Mapping[str, Any]]], int] = prompt_tokens,
        strict: bool = True,
        api_key: str | None = None,
        reject_unknown_models: bool = False,
        context_length: int | None = None,
    ) -> None:
        self._script: deque[Reply | Responder] = deque(script)
        self.responder = responder
        self.embedding_dim = embedding_dim
        self.stream_chunk_chars = stream_chunk_chars
        self.models = tuple(models)
        self.prompt_counter = prompt_counter
        self.strict = strict
        self.api_key = api_key
        self.reject_unknown_models = reject_unknown_models
        self.context_length = context_length
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._embedding_requests: list[dict[str, Any]] = []
        self._errors: list[str] = []
        self.closing = threading.Event()  # set by stop(); wakes handlers waiting out a fault_delay
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        """Bind ``127.0.0.1:0`` and serve in a background thread."""
        if self._httpd is not None:
            raise RuntimeError("ScriptedOpenAIServer is already running; stop() it before start()")
        self.closing.clear()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-openai"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections (ending pending delays) and join every thread."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self.closing.set()
        httpd.shutdown()
        httpd.drop_connections()
        httpd.server_close()  # joins the handler threads (block_on_close)
        thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if self.strict and exc_type is None and self._errors:
            raise ScriptError("scripted OpenAI server saw problems:\n- " + "\n- ".join(self._errors))

    @property
    def port(self) -> int:
        """The bound port (only while running)."""
        if self._httpd is None:
            raise RuntimeError(
                "ScriptedOpenAIServer is not running; use it in a `with` block or call start()"
            )
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting and records -------------------------------------------------------------------

    def enqueue(self, *items: Reply | Responder) -> None:
        """Append replies (or per-request callables) to the script."""
        with self._lock:
            self._script.extend(items)

    @property
    def remaining(self) -> int:
        """Script items not used yet."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat-completion request body so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        """Every embeddings request body so far, oldest first."""
        with self._lock:
            return list(self._embedding_requests)

    @property
    def errors(self) -> list[str]:
        """Script problems seen so far (raised as `ScriptError` on exit when `strict`)."""
        with self._lock:
            return list(self._errors)

    def clear_errors(self) -> None:
        """Forget recorded script problems (for tests that provoke them on purpose)."""
        with self._lock:
            self._errors.clear()

    def chat_model(self, **kwargs: Any) -> Any:
        """A ``ChatOpenAI`` pointed at this server (no retries, 10 s timeout unless overridden)."""
        from langchain_openai import ChatOpenAI

        options: dict[str, Any] = {"model": self.models[0], "api_key": "test", "base_url": self.base_url}
        return ChatOpenAI(**(options | {"max_retries": 0, "timeout": 10.0} | kwargs))

    # -- used by the request handler -------------------------------------------------------------

    def answer_chat(self, body: dict[str, Any]) -> tuple[int, Reply]:
        """Record `body` and pick its reply; returns (request number, reply)."""
        with self._lock:
            self._requests.append(body)
            number = len(self._requests)
            problem = tool_pairing_error(body.get("messages") or [])
            if problem is not None:
                return number, _error_reply(400, problem, "invalid_request_error")
            item: Reply | Responder | None = self._script.popleft() if self._script else self.responder
        if item is None:
            return number, self.report_problem(
                f"script exhausted: chat request #{number} has no scripted reply; "
                "enqueue more replies or pass responder="
            )
        if isinstance(item, Reply):
            reply = item
        else:
            try:
                reply = item(body)
            except Exception as exc:  # a crashing responder is reported (errors, ScriptError), not hidden
                return number, self.report_problem(f"responder raised {type(exc).__name__}: {exc}")
            if not isinstance(reply, Reply):
                return number, self.report_problem(
                    f"responder returned {type(reply).__name__}, expected Reply"
                )
        return number, self._check_tools(body, reply)

    def record_embedding_request(self, body: dict[str, Any]) -> None:
        """Keep an embeddings request body."""
        with self._lock:
            self._embedding_requests.append(body)

    def _check_tools(self, body: Mapping[str, Any], reply: Reply) -> Reply:
        tools = body.get("tools")
        if not tools or reply.allow_unknown_tools:
            return reply
        bound = {tool.get("function", {}).get("name") for tool in tools}
        unknown = [call.name for call in reply.tool_calls if call.name not in bound]
        if unknown:
            return self.report_problem(
                f"scripted tool call {unknown} is not among the bound tools {sorted(map(str, bound))}; "
                "fix the script, or use reply_unknown_tool_call to inject that fault"
            )
        return reply

    def report_problem(self, message: str) -> Reply:
        """Record a script problem and build the HTTP 500 the client receives for it."""
        with self._lock:
            self._errors.append(message)
        return _error_reply(500, f"ScriptedOpenAIServer: {message}", "server_error")


class _HTTPServer(ThreadingHTTPServer):
    """Threaded server that joins its handler threads on close and can cut open connections."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, owner: ScriptedOpenAIServer) -> None:
        self.owner = owner
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Shut down every open client socket so idle keep-alive handlers return."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by the peer or the handler
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError) or self.owner.closing.is_set():
            return  # the client gave up (timeout, truncated stream) or we are shutting down
        self.owner.report_problem(f"handler crashed: {type(error).__name__}: {error}")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections are cut by stop() long before this
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet; tests read `requests` instead."""

    def do_GET(self) -> None:
        """Serve ``/v1/models`` and ``/v1/models/<id>``."""
        path = self.path.split("?", 1)[0].rstrip("/")
        window = self.server.owner.context_length
        cards = [
            {"id": m, "object": "model", "created": 0, "owned_by": "plangraph-tests"}
            | ({"max_model_len": window} if window else {})
            for m in self._models
        ]
        if path == "/v1/models":
            self._send_json(200, {"object": "list", "data": cards})
            return
        for card in cards:
            if path == f"/v1/models/{card['id']}":
                self._send_json(200, card)
                return
        self._send_error_json(404, f"no route GET {path}; serving /v1/models")

    def do_POST(self) -> None:
        """Serve chat completions and embeddings."""
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._send_error_json(400, f"request body is not JSON: {exc}")
            return
        if not isinstance(body, dict):
            self._send_error_json(400, "request body must be a JSON object")
        elif path == "/v1/chat/completions":
            self._chat(body)
        elif path == "/v1/embeddings":
            self._embeddings(body)
        else:
            self._send_error_json(404, f"no route POST {path}; serving /v1/chat/completions, /v1/embeddings")

    @property
    def _models(self) -> tuple[str, ...]:
        return self.server.owner.models

    # -- chat ------------------------------------------------------------------------------------

    def _chat(self, body: dict[str, Any]) -> None:
        owner = self.server.owner
        if not isinstance(body.get("messages"), list):
            self._send_error_json(400, "'messages' must be a list of chat messages")
            return
        refusal = self._refusal(body)
        if refusal is not None:
            with owner._lock:
                owner._requests.append(body)
            self._send_json(refusal[0], refusal[1])
            return
        number, reply = owner.answer_chat(body)
        if reply.delay and owner.closing.wait(reply.delay):
            self.close_connection = True
            return
        if reply.status != 200:
            self._send_json(reply.status, dict(reply.error or {}), reply.headers)
        elif reply.raw_body is not None:
            content_type = "text/event-stream" if body.get("stream") else "text/html"
            self._start(200, content_type, [("Content-Length", str(len(reply.raw_body)))])
            self.wfile.write(reply.raw_body)
        elif body.get("stream"):
            self._stream(body, reply, number)
        elif reply.truncated:
            payload = json.dumps(self._completion(body, reply, number)).encode()
            self._start(200, "application/json", [("Content-Length", str(len(payload)))])
            self.wfile.write(payload[: len(payload) // 2])
            self._cut()
        else:
            self._send_json(200, self._completion(body, reply, number))

    def _refusal(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The 401 / 404 / 400 a real server gives before generating anything, or None."""
        owner = self.server.owner

        def error(message: str, kind: str, code: str, **extra: Any) -> dict[str, Any]:
            return {"error": {"message": message, "type": kind, "param": None, "code": code, **extra}}

        key = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if owner.api_key is not None and key != owner.api_key:
            return 401, error(
                "Incorrect API key provided. You can find your API key at your provider's dashboard.",
                "invalid_request_error",
                "invalid_api_key",
            )
        if owner.reject_unknown_models and body.get("model") not in self._models:
            return 404, error(
                f"The model `{body.get('model')}` does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
            )
        window = owner.context_length
        if window:
            wanted = owner.prompt_counter(body["messages"]) + int(
                body.get("max_tokens") or body.get("max_completion_tokens") or 0
            )
            if wanted > window:
                return 400, error(
                    f"request ({wanted} tokens) exceeds the available context size ({window} tokens), "
                    "try increasing it",
                    "exceed_context_size_error",
                    "400",
                    n_prompt_tokens=wanted,
                    n_ctx=window,
                )
        return None

    def _calls(self, reply: Reply, number: int) -> list[dict[str, Any]]:
        return [
            {
                "id": call.id or f"call_{number}_{index}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for index, call in enumerate(reply.tool_calls)
        ]

    def _usage(self, body: Mapping[str, Any], reply: Reply) -> dict[str, int]:
        prompt = self.server.owner.prompt_counter(body["messages"])
        completion = message_tokens({"content": reply.content, "tool_calls": self._calls(reply, 0)}) - 4
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _envelope(self, body: Mapping[str, Any], number: int, kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-scripted-{number}",
            "object": kind,
            "created": int(time.time()),
            "model": body.get("model") or self._models[0],
            "system_fingerprint": None,
        }

    def _completion(self, body: Mapping[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = self._calls(reply, number)
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(reply)}
        return self._envelope(body, number, "chat.completion") | {
            "choices": [choice],
            "usage": self._usage(body, reply),
        }

    def _stream(self, body: Mapping[str, Any], reply: Reply, number: int) -> None:
        self._start(
            200, "text/event-stream", [("Cache-Control", "no-cache"), ("Transfer-Encoding", "chunked")]
        )
        if reply.empty_stream:
            if reply.stall:
                self._stall(reply)
            self.wfile.write(b"0\r\n\r\n")
            return
        for position, event in enumerate(self._events(body, reply, number)):
            self._write_chunk(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
            if position == 1 and reply.stall:
                self._stall(reply)
        if reply.truncated:
            self._cut()
            return
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _stall(self, reply: Reply) -> None:
        """Keep the stream open `reply.stall` seconds, a ``: ping`` comment every `ping_every` seconds."""
        owner = self.server.owner
        end = time.monotonic() + reply.stall
        while time.monotonic() < end:
            if owner.closing.wait(min(reply.ping_every or reply.stall, max(0.0, end - time.monotonic()))):
                return
            try:
                self._write_chunk(f": ping - {datetime.now(UTC):%Y-%m-%d %H:%M:%S}\r\n\r\n".encode())
            except OSError:  # the client cut the connection (its deadline)
                return

    def _events(self, body: Mapping[str, Any], reply: Reply, number: int) -> Iterator[dict[str, Any]]:
        usage = (body.get("stream_options") or {}).get("include_usage")
        base = self._envelope(body, number, "chat.completion.chunk") | ({"usage": None} if usage else {})

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return base | {"choices": [choice]}

        size = self.server.owner.stream_chunk_chars
        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(reply.content or "", size):
            yield chunk({"content": piece})
        if reply.truncated:
            return
        for index, call in enumerate(self._calls(reply, number)):
            head = {"index": index, "id": call["id"], "type": "function"}
            yield chunk(
                {"tool_calls": [head | {"function": {"name": call["function"]["name"], "arguments": ""}}]}
            )
            for piece in _pieces(call["function"]["arguments"], size):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, _finish(reply))
        if usage:
            yield base | {"choices": [], "usage": self._usage(body, reply)}

    # -- embeddings ------------------------------------------------------------------------------

    def _embeddings(self, body: dict[str, Any]) -> None:
        self.server.owner.record_embedding_request(body)
        raw = body.get("input")
        items = (
            [raw]
            if isinstance(raw, str) or (isinstance(raw, list) and raw and isinstance(raw[0], int))
            else raw
        )
        if not isinstance(items, list) or not items:
            self._send_error_json(400, "'input' must be a string, a list of strings or token arrays")
            return
        dim = int(body.get("dimensions") or self.server.owner.embedding_dim)
        texts = [item if isinstance(item, str) else json.dumps(item) for item in items]
        data = []
        for index, text in enumerate(texts):
            vector: Any = hash_embedding(text, dim)
            if body.get("encoding_format") == "base64":
                vector = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": vector})
        tokens = sum(count_tokens(text) for text in texts)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or self._models[0],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    # -- wire ------------------------------------------------------------------------------------

    def _start(self, status: int, content_type: str, headers: Iterable[tuple[str, str]]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()

    def _send_json(self, status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self._start(status, "application/json", [("Content-Length", str(len(data))), *headers])
        self.wfile.write(data)

    def _send_error_json(self, status: int, message: str) -> None:
        reply = _error_reply(status, message, "invalid_request_error")
        self._send_json(status, dict(reply.error or {}), reply.headers)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _cut(self) -> None:
        """Close the connection mid-body, as a crashing upstream would."""
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"
