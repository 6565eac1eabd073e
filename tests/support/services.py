"""Open what a graph run wrote (memory, results, plans) the way the graph's services do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, ToolMessage

from graphs.context import Context
from graphs.services import ServiceHub, embeddings_for
from memory import BlockMemory
from tools.plans.store import PlanStore
from tools.results import ConversationResults

__all__ = ["graph_memory", "graph_plans", "graph_results", "recorded_call", "env_embeddings"]


def env_embeddings() -> Embeddings:
    """The embeddings the environment selects (the tests set PLANGRAPH_EMBEDDINGS=hash)."""
    return embeddings_for(Context(conversation_id="test"))


def graph_memory(data_dir: str | Path) -> BlockMemory:
    """A BlockMemory on the data dir's memory files (a fresh instance, as another process would open it)."""
    return ServiceHub().memory(Context(conversation_id="test", data_dir=str(data_dir)))


def graph_results(data_dir: str | Path, user_id: str, conversation_id: str) -> ConversationResults:
    """The results index of one conversation in the data dir."""
    ctx = Context(user_id=user_id, conversation_id=conversation_id, data_dir=str(data_dir))
    return ServiceHub()(ctx).results("test")


def graph_plans(data_dir: str | Path) -> PlanStore:
    """The data dir's plan store."""
    return PlanStore(Path(data_dir).expanduser().resolve() / "plans.sqlite")


def recorded_call(memory: Any, tool_name: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Args and structured result of the newest completed call of `tool_name` an agent wrote to memory."""
    msgs = memory.messages()
    results = {m.tool_call_id: m for m in msgs if isinstance(m, ToolMessage)}
    for msg in reversed(msgs):
        if not isinstance(msg, AIMessage):
            continue
        for call in reversed(msg.tool_calls):
            tool_msg = results.get(call["id"] or "")
            if call["name"] == tool_name and tool_msg is not None and tool_msg.status != "error":
                return dict(call["args"]), dict(tool_msg.additional_kwargs.get("structured") or {})
    return None
