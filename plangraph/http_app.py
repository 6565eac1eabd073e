"""The HTTP API: LangServe routes under /plangraph, REST for plans, auth and limits.

`create_app()` returns a FastAPI app (embed it, or run it with `plangraph serve`). Every route
except /healthz and /login needs an `X-API-Key` (or the signed-in browser's cookie); the key decides the user, and a
user only ever sees their own conversations, plans and artifacts.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse

from graphs.context import Context
from graphs.main import build_graph
from graphs.services import ServiceHub
from plangraph.access_log import AccessLog
from plangraph.auth import FailureLimiter, RateLimiter, SessionStore, load_api_keys
from plangraph.checkpoint import open_checkpointer
from plangraph.http_guard import Guard, json_error
from plangraph.http_kb import UPLOAD_PREFIX, add_kb
from plangraph.http_memory import add_memory
from plangraph.http_runnable import Backend, ConversationRunnable
from plangraph.runner import (
    ConfigurationError,
    ConversationBusyError,
    ConversationNotFoundError,
    ConversationStateError,
    ServiceUnavailableError,
    UserFacingError,
)
from plangraph.turn_lock import check_data_dir, turn_locks_for
from plangraph.web import LoginRedirect, add_web
from plangraph.wire import public
from tools.contracts import artifact_file, artifacts_of
from tools.plans.store import PlanStore

if TYPE_CHECKING:
    from langserve.server import EndpointName

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "DEFAULT_RATE_LIMIT", "DEFAULT_WORKERS", "create_app"]

DEFAULT_MAX_REQUEST_BYTES = 1_000_000
DEFAULT_MAX_UPLOAD_BYTES = 50_000_000  # one knowledge-base document (PUT /kb/documents/…)
DEFAULT_RATE_LIMIT = 120  # requests per minute per key
DEFAULT_WORKERS = 8  # graph turns running at once; more requests wait their turn
DEFAULT_AUTH_FAILURES_PER_CLIENT = 10  # wrong keys / sign-ins per client address per minute, then back-off
DEFAULT_AUTH_FAILURES_GLOBAL = 100  # wrong keys / sign-ins per minute from all clients together
CONVERSATION_ID = re.compile(r"[A-Za-z0-9.-]{1,64}")
USER_ID = re.compile(r"[\w.-]{1,64}")
ENDPOINTS: list[EndpointName] = [
    "invoke",
    "batch",
    "stream",
    "stream_events",
    "input_schema",
    "output_schema",
    "config_schema",
]
# Not served: LangServe's playground. Its input form cannot build plangraph's input (a message is a
# free-form dict, an answer is `resume`), so its Start button could only fail; people use the chat
# page at / (plangraph.web) instead.
_STATUS = {
    ConversationNotFoundError: 404,
    ConversationStateError: 409,
    ConversationBusyError: 409,
    ServiceUnavailableError: 503,
    ConfigurationError: 503,
}


def _env_list(name: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, "").split(",") if part.strip()]


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        return int(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a whole number.") from None


def create_app(
    data_dir: str | Path | None = None,
    checkpoint_url: str | None = None,
    api_keys: Mapping[str, str] | None = None,
    *,
    insecure_no_auth: bool = False,
    max_request_bytes: int | None = None,
    rate_limit_per_minute: int | None = None,
    workers: int | None = None,
    admin_keys: Collection[str] | None = None,
    warm_up: bool = False,
) -> FastAPI:
    """The plangraph HTTP app; arguments left out fall back to the PLANGRAPH_* environment variables.

    With no API keys (argument, PLANGRAPH_API_KEYS, PLANGRAPH_API_KEYS_FILE) this raises unless
    `insecure_no_auth` is set; then every caller acts as PLANGRAPH_USER_ID (or "default").
    Admin keys (argument or PLANGRAPH_ADMIN_KEYS, comma-separated) may also manage the shared
    knowledge-base documents; one that is not among the API keys acts as user "admin".
    With `warm_up` the app runs throwaway offline turns at start-up, before it answers anything
    (plangraph/warm.py), so the first user does not wait for the process's one-time loads.
    """
    keys = dict(api_keys) if api_keys is not None else load_api_keys()
    admins = list(admin_keys) if admin_keys is not None else _env_list("PLANGRAPH_ADMIN_KEYS")
    for key in admins:
        keys.setdefault(key, "admin")
    if not keys and not insecure_no_auth:
        raise ValueError(
            "No API keys configured: set PLANGRAPH_API_KEYS='key1:user1,key2:user2' or "
            "PLANGRAPH_API_KEYS_FILE, or allow anonymous use on loopback with --insecure-no-auth."
        )
    for user in keys.values():
        if not USER_ID.fullmatch(user):
            raise ValueError(f"API key user id {user!r}: use 1–64 letters, digits, '_', '.', '-'.")
    turn_workers = workers if workers is not None else _env_int("PLANGRAPH_HTTP_WORKERS", DEFAULT_WORKERS)
    if turn_workers < 1:
        raise ValueError("PLANGRAPH_HTTP_WORKERS must be at least 1.")
    data_path = Context(data_dir=str(data_dir)).data_path if data_dir else Context().data_path
    check_data_dir(data_path)
    _check_templates()
    with open_checkpointer(data_path, checkpoint_url):
        pass  # a database that cannot be reached is a clear error now, not a traceback at startup
    opened: dict[str, Backend] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        with (
            open_checkpointer(data_path, checkpoint_url) as saver,
            ThreadPoolExecutor(turn_workers, thread_name_prefix="plangraph-turn") as pool,
        ):
            if warm_up:
                from plangraph.warm import warm_up as run_warm_up

                await asyncio.to_thread(run_warm_up)
            hub = ServiceHub()
            opened["backend"] = Backend(
                build_graph(checkpointer=saver, services=hub),
                str(data_path),
                pool,
                hub,
                turn_locks_for(saver, data_path),
            )
            yield
            opened.clear()

    app = FastAPI(title="plangraph", lifespan=lifespan, docs_url=None, redoc_url=None)
    runnable = ConversationRunnable(lambda: opened["backend"])
    _add_langserve(app, runnable)
    _add_rest(app, data_path, lambda: opened["backend"])
    add_web(app, data_path, lambda: opened["backend"])
    add_kb(app, str(data_path), lambda: opened["backend"].services, {SessionStore.digest(k) for k in admins})
    add_memory(app, str(data_path), lambda: opened["backend"].services)
    _add_error_handlers(app)
    app.add_middleware(
        Guard,
        keys=keys,
        anonymous_user=None if keys else Context().user_id,
        limiter=RateLimiter(
            rate_limit_per_minute
            if rate_limit_per_minute is not None
            else _env_int("PLANGRAPH_RATE_LIMIT", DEFAULT_RATE_LIMIT)
        ),
        max_bytes=max_request_bytes
        if max_request_bytes is not None
        else _env_int("PLANGRAPH_MAX_REQUEST_BYTES", DEFAULT_MAX_REQUEST_BYTES),
        public=("/healthz",),
        uploads=(UPLOAD_PREFIX, _env_int("PLANGRAPH_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES)),
        failures=FailureLimiter(
            _env_int("PLANGRAPH_AUTH_FAILURES_PER_CLIENT", DEFAULT_AUTH_FAILURES_PER_CLIENT),
            _env_int("PLANGRAPH_AUTH_FAILURES_GLOBAL", DEFAULT_AUTH_FAILURES_GLOBAL),
        ),
        sessions=SessionStore(data_path / "sessions.sqlite") if keys else None,
    )
    app.add_middleware(LoginRedirect)
    app.add_middleware(AccessLog)
    return app


def _check_templates() -> None:
    """Refuse to start with a broken workflow template (TemplateError, a ValueError naming the file)."""
    from nodes.agents import agents
    from tools.plans.workflows import load_templates

    load_templates(agents=set(agents()), extra=Context().templates_dirs)


def _add_langserve(app: FastAPI, runnable: ConversationRunnable) -> None:
    from langserve import add_routes

    async def per_request(config: dict[str, Any], request: Request) -> dict[str, Any]:
        """User from the API key, conversation from config or X-Conversation-Id; checks before streaming."""
        user = request.state.user_id
        configurable = dict(config.get("configurable") or {})
        if configurable.get("user_id") not in (None, "", user):
            raise HTTPException(403, "config.configurable.user_id is not the user of your API key.")
        conversation = configurable.get("thread_id") or request.headers.get("x-conversation-id") or ""
        if conversation and not CONVERSATION_ID.fullmatch(conversation):
            raise HTTPException(422, "Conversation id: use 1–64 letters, digits, '.' or '-'.")
        config = {**config, "configurable": {**configurable, "user_id": user, "thread_id": conversation}}
        body = await request.json()
        if isinstance(body, dict) and isinstance(body.get("input"), dict):
            await asyncio.to_thread(runnable.check, body["input"], config)  # type: ignore[arg-type]
        return config

    add_routes(
        app,
        runnable,
        path="/plangraph",
        per_req_config_modifier=per_request,
        enabled_endpoints=ENDPOINTS,
    )


def _add_rest(app: FastAPI, data_path: Path, backend: Callable[[], Backend]) -> None:
    store = PlanStore(data_path / "plans.sqlite")

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the server is up and its checkpointer is open."""
        return {"status": "ok"}

    @app.get("/plans/{plan_id}")
    async def get_plan(plan_id: str, request: Request) -> dict[str, Any]:
        """One of your plans with its status and (while waiting) its question."""
        record = await asyncio.to_thread(store.get, plan_id, user_id=request.state.user_id)
        if record is None:
            raise HTTPException(404, f"No plan {plan_id} for your user.")
        return public(record, data_path, record["conversationId"])

    @app.get("/pending")
    async def pending(request: Request) -> dict[str, Any]:
        """Your plans that wait for an answer (resume them with {"resume": ...})."""
        plans = await asyncio.to_thread(store.list, user_id=request.state.user_id, status="interrupted")
        return {"plans": [public(p, data_path, p["conversationId"]) for p in plans]}

    @app.get("/artifacts/{conversation_id}/{name}")
    async def artifact(conversation_id: str, name: str, request: Request) -> FileResponse:
        """A file (report, chart) that one of your plans in the conversation produced."""
        user = request.state.user_id
        records = await asyncio.to_thread(store.list, user_id=user, conversation_id=conversation_id)
        # A step's files exist before its plan is saved again (the page shows them as they come).
        running = await asyncio.to_thread(backend().runner(user, conversation_id).current_plan)
        for plan in [*([running] if running else []), *(r["plan"] for r in records)]:
            for path in artifacts_of(plan):
                file = artifact_file(data_path, path)
                if file.name == name and file.is_file() and file.resolve().is_relative_to(data_path):
                    return FileResponse(file)
        raise HTTPException(404, f"No file {name} in your conversation {conversation_id}.")


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(UserFacingError)
    async def user_facing(_: Request, error: UserFacingError) -> JSONResponse:
        return json_error(_STATUS.get(type(error), 422), str(error))
