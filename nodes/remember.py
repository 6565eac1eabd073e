"""remember: writes the conversation's newest message into the planner's block memory."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.services import agent_memory

__all__ = ["remember"]


def remember(state: State, runtime: Runtime[Context]) -> dict:
    """Append the newest human or AI message to `planner_{user}_{conversation}` memory (once per id)."""
    ctx = resolve_context(runtime.context)
    messages = [m for m in state.get("messages", []) if isinstance(m, (HumanMessage, AIMessage))]
    if not messages:
        return {}
    newest = messages[-1]
    memory = agent_memory(ctx, "planner")
    if newest.id is None or all(m.id != newest.id for m in memory.recent(4)):
        memory.add([newest])
    return {}
