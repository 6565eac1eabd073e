"""The long-term memory routes: a signed-in user's facts and preferences, and forgetting one.

    GET    /memory/facts              your long-term facts (newest first)
    DELETE /memory/facts/{id or key}  forget one (404 names how to list them)

Facts are written when a request states something lasting ("我们的电价是0.72", "以后报告都用英文";
nodes/standing.py); the same list is `plangraph memory facts` on the command line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Request

from graphs.context import Context
from graphs.services import ServiceHub
from memory.facts import FactStore

__all__ = ["add_memory"]


def add_memory(app: FastAPI, data_dir: str, hub: Callable[[], ServiceHub]) -> None:
    """Add the /memory/facts routes (each caller sees and forgets only their own facts)."""

    def facts(request: Request) -> tuple[FactStore, str]:
        user = str(request.state.user_id)
        return hub().memory(Context(user_id=user, data_dir=data_dir)).facts, user

    @app.get("/memory/facts")
    async def list_facts(request: Request) -> dict[str, Any]:
        """Your long-term facts and preferences, newest first."""
        store, user = facts(request)
        found = await asyncio.to_thread(store.for_user, user)
        return {"user_id": user, "facts": [f.as_dict() for f in found]}

    @app.delete("/memory/facts/{fact}")
    async def forget_fact(fact: str, request: Request) -> dict[str, Any]:
        """Forget one of your facts, by id (f_…) or key (electricity_price, lang, …)."""
        store, user = facts(request)
        gone = await asyncio.to_thread(store.forget, user, fact)
        if gone is None:
            raise HTTPException(404, f"No long-term fact {fact} of yours; GET /memory/facts lists them.")
        return gone.as_dict()
