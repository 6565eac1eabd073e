"""A conversation of PV/knowledge agents run on StepContexts built directly, each step with its EP."""

from __future__ import annotations

from typing import Any

from nodes.agents import get_agent
from nodes.kit.ep import start_ep
from nodes.kit.step import InMemoryAgentMemory, StepContext
from tests.support.services import env_embeddings
from tools.kb.corpus import kb_dirs
from tools.kb.index import KnowledgeIndex
from tools.results import InMemoryResults

S1_ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"


class Conversation:
    """One user's conversation: a memory per agent, the progress lines, the results index."""

    def __init__(self, data_dir, model=None) -> None:
        self.data_dir = data_dir
        self.model = model
        self.memories: dict[str, InMemoryAgentMemory] = {}
        self.progress: list[str] = []
        self.results = InMemoryResults()
        self._index: KnowledgeIndex | None = None

    def knowledge(self) -> KnowledgeIndex:
        if self._index is None:
            self._index = KnowledgeIndex(self.data_dir, kb_dirs(), env_embeddings())
        return self._index

    def memory(self, name: str) -> InMemoryAgentMemory:
        return self.memories.setdefault(name, InMemoryAgentMemory(f"{name}_u1_c1"))

    def run(self, agent: str, query: str, answers=(), seq=0, deps=None, previous=None) -> dict[str, Any]:
        """Run one step of `agent` the way the agent node does (EP continued from `previous`)."""
        spec = get_agent(agent)
        context = {"answers": {str(seq): list(answers)}}
        ctx = StepContext(
            plan_id="plan-1",
            seq_no=seq,
            agent_name=agent,
            requirement=query,
            user_query=query,
            plan_context=context,
            deps=deps or {},
            user_id="u1",
            conversation_id="c1",
            data_dir=self.data_dir,
            memory=self.memory(agent),
            emit=self.progress.append,
            model=self.model,
            results=self.results,
            knowledge=self.knowledge,
            ep=start_ep(spec, "plan-1", seq, previous, context),
        )
        return dict(spec.run(ctx))
