"""Run-scoped services for nodes: memory views, the chat model, the plan store.

Created lazily from the run Context (never at import time) and cached per data dir.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import BaseTool

from graphs.context import Context
from plangraph.plan_store import PlanStore, open_plan_store

if TYPE_CHECKING:
    from memory import BlockMemory

__all__ = [
    "BlockAgentMemory",
    "agent_memory",
    "agent_tools",
    "agent_window",
    "block_memory",
    "chat_model",
    "plan_store",
]


class BlockAgentMemory:
    """An AgentMemory view of one namespace of the block memory."""

    def __init__(self, memory: BlockMemory, namespace: str) -> None:
        self.memory = memory
        self.namespace = namespace

    def add(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages to the namespace (chunked into blocks by the memory)."""
        self.memory.add_messages(self.namespace, list(messages))

    def messages(self) -> list[BaseMessage]:
        """All messages of the namespace, oldest first."""
        return self.memory.messages(self.namespace)

    def recent(self, limit: int) -> list[BaseMessage]:
        """The newest `limit` messages, oldest first (cheap however long the conversation)."""
        return self.memory.messages(self.namespace, limit=limit)


def block_memory(ctx: Context) -> BlockMemory:
    """The data dir's block memory (one instance per process and path)."""
    from memory import open_memory

    return open_memory(ctx.data_path)


def agent_memory(ctx: Context, agent_name: str) -> BlockAgentMemory:
    """`{agent}_{user}_{conversation}` memory for this run's user and conversation.

    The namespace is registered to the user, so its important blocks reach the user's long-term tier.
    """
    memory = block_memory(ctx)
    namespace = memory.scope(agent_name, ctx.user_id, ctx.conversation_id)
    return BlockAgentMemory(memory, namespace)


def agent_window(ctx: Context, agent_name: str, system_prompt: str, request: str) -> list[BaseMessage]:
    """The disclosed window for one model call of `agent_name`, ending with `request`.

    Exactly one SystemMessage (`system_prompt` + block metadata or a `list_blocks` hint), the
    agent's latest block and loose messages, then `request` — within `ctx.token_budget`.
    """
    memory = block_memory(ctx)
    namespace = memory.scope(agent_name, ctx.user_id, ctx.conversation_id)
    return memory.disclose(namespace, ctx.token_budget, system_prompt, HumanMessage(content=request))


def agent_tools(ctx: Context, agent_name: str, todo_id: str | None = None) -> list[BaseTool]:
    """search_block / list_blocks / load bound to the agent's namespace (nothing for the model to set)."""
    from tools.memory_tools import make_memory_tools

    memory = block_memory(ctx)
    return make_memory_tools(memory, memory.scope(agent_name, ctx.user_id, ctx.conversation_id), todo_id)


def plan_store(ctx: Context) -> PlanStore:
    """The data dir's plan store."""
    return open_plan_store(ctx.data_path)


def chat_model(ctx: Context) -> BaseChatModel | None:
    """ChatOpenAI for `ctx.model` (OPENAI_BASE_URL / OPENAI_API_KEY honoured), or None offline."""
    if not ctx.model:
        return None
    import os

    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=ctx.model,
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",  # type: ignore[arg-type]
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        timeout=ctx.model_timeout,
        max_retries=1,
        streaming=True,
        stream_usage=True,
    )
