"""The chat page of `plangraph serve`: one card per plan step, the plan as a graph, past conversations.

The page (`plangraph/web_static/`, shipped as package data, no CDN) talks to the same API as any
client: it streams turns over LangServe's `POST /plangraph/stream` and reads three small routes
added here, which API clients may use too:

- `GET /conversations`: the signed-in user's conversations, newest first (last request, status, time);
- `GET /conversations/{id}`: a conversation's current plan as step cards (status label from the
  plan's state machine, output, artifact URLs), the waiting question, the summary;
- `GET /conversations/{id}/plan.svg`: the plan drawn by Graphviz `dot` (404 when it is not
  installed: the page then draws the graph itself).

Every route sits behind the API-key guard; a browser without a session that opens `/` is sent to
`/login` (`LoginRedirect`).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plangraph.conversations import conversation_list
from plangraph.http_runnable import Backend, artifact_url
from plangraph.wire import public
from tools.plans.store import PlanStore

__all__ = ["PAGE_PATHS", "LoginRedirect", "add_web", "conversation_view", "graphviz_installed"]

PAGE_PATHS = ("/", "/index.html")
_ASSETS = {"app.js": "text/javascript", "app.css": "text/css"}
# The page loads only its own files: no CDN, no inline script, nothing from another origin.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_CONVERSATION_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")


def graphviz_installed() -> bool:
    """True when Graphviz `dot` can draw the plan on the server (else the page draws it)."""
    return shutil.which("dot") is not None


def _static(name: str) -> str:
    return resources.files("plangraph").joinpath("web_static", name).read_text(encoding="utf-8")


def conversation_view(backend: Backend, user_id: str, conversation_id: str) -> dict[str, Any] | None:
    """The page's view of one conversation (None when the user has no such conversation)."""
    from tools.plans.status import step_labels

    runner = backend.runner(user_id, conversation_id)
    state = runner.snapshot()
    if state is None or not state.values:
        return None
    plan = state.values.get("plan")
    question = dict(state.interrupts[0].value) if state.interrupts else None
    labels = step_labels(plan) if plan else {}
    steps = []
    for step in plan["steps"] if plan else []:
        result = step.get("result") or {}
        context = result.get("context") or {}
        output = result.get("output") or ""
        detail = context.get("detail")
        if isinstance(detail, str) and detail.startswith("store://"):  # the plan keeps a brief only
            output = runner.services(runner.context).results(step["agentName"]).load(detail)["text"]
        steps.append(
            {
                "seqNo": step["seqNo"],
                "agentName": step["agentName"],
                "requirement": step["requirement"],
                "status": step["status"],
                "label": labels.get(step["seqNo"], ""),
                "dependsOn": list(step["dependsOn"]),
                "output": output,
                "artifacts": [artifact_url(conversation_id, str(p)) for p in context.get("artifacts", [])],
                "question": question["question"]
                if question and question.get("seqNo") == step["seqNo"]
                else None,
            }
        )
    if question:
        status = "waiting"
    elif state.next or state.tasks:
        status = "running"
    elif plan and any(s["status"] == "failed" for s in plan["steps"]):
        status = "failed"
    else:
        status = "done" if plan else "empty"
    view = {
        "conversationId": conversation_id,
        "planId": plan["planId"] if plan else None,
        "request": plan["userQuery"] if plan else "",
        "status": status,
        "steps": steps,
        "question": question,
        "summary": state.values.get("summary", "") if status in ("done", "failed") else "",
        "graph": f"/conversations/{conversation_id}/plan.svg" if plan and graphviz_installed() else None,
    }
    return public(view, backend.data_dir, conversation_id)


def _plan_svg(backend: Backend, user_id: str, conversation_id: str) -> bytes | None:
    from tools.plans.dot import plan_to_dot
    from tools.plans.render import GraphvizMissingError, render

    state = backend.runner(user_id, conversation_id).snapshot()
    plan = state.values.get("plan") if state is not None else None
    if not plan:
        return None
    try:
        return render(public(plan_to_dot(plan), backend.data_dir, conversation_id), "svg")
    except GraphvizMissingError:
        return None


def add_web(app: FastAPI, data_path: Path, backend: Callable[[], Backend]) -> None:
    """Add the page, its assets and the conversation routes to `app`."""
    store = PlanStore(data_path / "plans.sqlite")

    def checked(conversation_id: str) -> str:
        if not 1 <= len(conversation_id) <= 64 or not set(conversation_id) <= _CONVERSATION_ID_CHARS:
            raise HTTPException(422, "Conversation id: use 1–64 letters, digits, '.' or '-'.")
        return conversation_id

    @app.get("/", include_in_schema=False)
    @app.get("/index.html", include_in_schema=False)
    async def page() -> HTMLResponse:
        """The chat page."""
        return HTMLResponse(_static("index.html"), headers={"Content-Security-Policy": _CSP})

    @app.get("/web/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        """The page's script and style sheet."""
        if name not in _ASSETS:
            raise HTTPException(404, f"No file {name}.")
        return Response(_static(name), media_type=_ASSETS[name], headers={"Cache-Control": "no-cache"})

    @app.get("/conversations")
    async def conversations(request: Request) -> dict[str, Any]:
        """Your conversations, newest first: last request, status, time, waiting question."""
        user = request.state.user_id
        records = await asyncio.to_thread(store.list, user_id=user)
        rows = [public(row, data_path, row["conversationId"]) for row in conversation_list(records)]
        return {"user": user, "conversations": rows}

    @app.get("/conversations/{conversation_id}")
    async def conversation(conversation_id: str, request: Request) -> dict[str, Any]:
        """One of your conversations: its plan as step cards, the waiting question, the summary."""
        view = await asyncio.to_thread(
            conversation_view, backend(), request.state.user_id, checked(conversation_id)
        )
        if view is None:
            raise HTTPException(404, f"No conversation {conversation_id} for your user.")
        return view

    @app.get("/conversations/{conversation_id}/plan.svg")
    async def plan_svg(conversation_id: str, request: Request) -> Response:
        """The conversation's plan drawn by Graphviz (404 without a plan or without Graphviz)."""
        svg = await asyncio.to_thread(_plan_svg, backend(), request.state.user_id, checked(conversation_id))
        if svg is None:
            raise HTTPException(404, f"No plan drawing for conversation {conversation_id}.")
        return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


class LoginRedirect:
    """Sends a browser that opens the page without a session to `/login` instead of a JSON 401."""

    def __init__(self, app: ASGIApp, login_path: str = "/login") -> None:
        """Wrap `app` (add it outside the API-key guard)."""
        self.app = app
        self.login_path = login_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; turn a 401 of a page GET into a 303 to the sign-in page."""
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] not in PAGE_PATHS:
            await self.app(scope, receive, send)
            return
        redirected = False

        async def redirecting_send(message: Message) -> None:
            nonlocal redirected
            if message["type"] == "http.response.start" and message["status"] == 401:
                redirected = True
                headers = [(b"location", self.login_path.encode()), (b"content-length", b"0")]
                await send({"type": "http.response.start", "status": 303, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
            elif not redirected:
                await send(message)

        await self.app(scope, receive, redirecting_send)
