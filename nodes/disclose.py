"""disclose: the window of the next model call, kept in state as a small reference.

Runs before every model-calling node (the planner today). It builds the progressive-disclosure
window of the agent's memory namespace within `Context.token_budget` — one SystemMessage (the
agent prompt plus block metadata or a `list_blocks` hint), the latest complete block, the newest
loose messages and the current input — and stores only a `WindowRef` (message ids and counts)
under `window`, so checkpoints stay small. The model-calling node rebuilds the messages with
`BlockMemory.window(ref, prompt)`.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.kit.services import ServicesFactory

__all__ = ["make_disclose"]


def make_disclose(agent_name: str, system_prompt: str, services: ServicesFactory):  # noqa: ANN201 - a LangGraph node
    """A node disclosing `{agent_name}_{user}_{conversation}` memory under `system_prompt`."""

    def disclose(state: State, runtime: Runtime[Context]) -> dict:
        """Store the reference of the window the next model call will see."""
        svc = services(resolve_context(runtime.context))
        current = next((m for m in reversed(state.get("messages", [])) if isinstance(m, HumanMessage)), None)
        window = svc.memory.disclose_ref(
            svc.namespace(agent_name), svc.ctx.token_budget, system_prompt, current
        )
        return {"window": window}

    disclose.__name__ = f"disclose_{agent_name}"
    return disclose
