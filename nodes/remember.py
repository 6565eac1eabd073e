"""remember: writes the conversation's newest message into the planner's block memory."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.runtime import Runtime

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.services import agent_memory

__all__ = ["remember", "remember_answer"]


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


def remember_answer(state: State, runtime: Runtime[Context]) -> dict:
    """Remember the final answer, then keep only the newest `state_messages` chat messages in state.

    Every request and answer is in the planner's block memory (this node and `remember_request`),
    so the older copies in the graph state are redundant; without trimming, every checkpoint
    would carry the whole conversation and grow with every turn (bench/graph_checkpoint_bytes.py).
    """
    remember(state, runtime)
    keep = resolve_context(runtime.context).state_messages
    messages = state.get("messages", [])
    if keep <= 0 or len(messages) <= keep:
        return {}
    return {"messages": [RemoveMessage(id=m.id) for m in messages[:-keep] if m.id]}
