"""What a node may use during one run: memory views, results, plan store, knowledge index, model.

`RunServices` is built from the run's Context by `graphs.services.ServiceHub` and handed to the
nodes by the graph builder; nodes never build services or read settings themselves, so a test
can hand the graph fakes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import BaseTool

from graphs.context import Context
from tools.memory_tools import make_memory_tools, make_todo_tool
from tools.plans.store import PlanStore
from tools.results import ConversationResults, ResultsIndex

if TYPE_CHECKING:
    from memory import BlockMemory
    from tools.kb.index import KnowledgeIndex

__all__ = ["BlockAgentMemory", "RunServices", "ServicesFactory"]


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


@dataclass(frozen=True)
class RunServices:
    """The services of one run (one user's conversation); built by `graphs.services.ServiceHub`."""

    ctx: Context
    memory: BlockMemory
    plans: PlanStore
    results_index: ResultsIndex
    model: BaseChatModel | None
    knowledge: Callable[[], KnowledgeIndex]
    models: Callable[[str], BaseChatModel | None] | None = None

    def model_for(self, kind: str) -> BaseChatModel | None:
        """The chat model for one kind of call ("plan", "step", "summary", "gist"): its own output bound.

        `model` (the step kind) when the services were built without per-kind models (tests).
        """
        return self.model if self.models is None else self.models(kind)

    def namespace(self, agent_name: str) -> str:
        """`{agent}_{user}_{conversation}`, registered to the user (its important blocks reach long-term)."""
        return self.memory.scope(agent_name, self.ctx.user_id, self.ctx.conversation_id)

    def agent_memory(self, agent_name: str) -> BlockAgentMemory:
        """The agent's memory in this run's conversation."""
        return BlockAgentMemory(self.memory, self.namespace(agent_name))

    def agent_window(
        self,
        agent_name: str,
        system_prompt: str,
        request: str,
        todo_id: str | None = None,
        budget: int | None = None,
    ) -> list[BaseMessage]:
        """The disclosed window for one model call of `agent_name`, ending with `request`.

        Exactly one SystemMessage (`system_prompt` + block metadata or a `list_blocks` hint), the
        agent's latest block and loose messages, then `request` — within `budget` tokens (default
        the run's token budget). With `todo_id` (a plan step) only that sub-task's blocks and
        messages: the agent's other sub-tasks are named by id, to search with the memory tools.
        """
        return self.memory.disclose(
            self.namespace(agent_name),
            self.ctx.token_budget if budget is None else budget,
            system_prompt,
            HumanMessage(content=request),
            todo_id=todo_id,
        )

    def agent_tools(self, agent_name: str, todo_id: str | None = None) -> list[BaseTool]:
        """search_block / list_blocks / load bound to the agent's namespace (nothing for the model to set)."""
        return make_memory_tools(self.memory, self.namespace(agent_name), todo_id)

    def todo_tool(self, todos: Mapping[str, str]) -> BaseTool | None:
        """`search_todo` over earlier steps' blocks (`todos`: todo id -> agent name); None without any."""
        if not todos:
            return None
        return make_todo_tool(self.memory, {todo: self.namespace(agent) for todo, agent in todos.items()})

    def results(self, agent_name: str) -> ConversationResults:
        """The conversation's results; payloads written by `agent_name` are owned by its namespace."""
        owner = self.namespace(agent_name)
        return ConversationResults(
            self.results_index,
            self.ctx.user_id,
            self.ctx.conversation_id,
            put_blob=lambda text: self.memory.offload(text, owner),
            get_blob=lambda ref: self.memory.load(ref, namespace=owner),
        )


ServicesFactory = Callable[[Context], RunServices]
