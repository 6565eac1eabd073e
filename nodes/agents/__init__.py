"""The shipped sub-agents: one module each, listed here once.

Adding a sub-agent: write `nodes/agents/my_agent.py` exposing `AGENT = AgentSpec(...)` (see
`nodes.kit.registry`), optionally its internal plan as `nodes/agents/plans/my_agent.dot`, and add
`"nodes.agents.my_agent"` to `AGENT_MODULES`. Nothing else changes (docs/architecture.md).
"""

from __future__ import annotations

from functools import cache

from nodes.kit.registry import AgentSpec, get_spec, load_agents

__all__ = ["AGENT_MODULES", "agents", "get_agent"]

AGENT_MODULES: tuple[str, ...] = (
    "nodes.agents.pv_calc",
    "nodes.agents.sensitivity",
    "nodes.agents.reverse_opt",
    "nodes.agents.report",
    "nodes.agents.knowledge",
    "nodes.agents.assistant",
)


@cache
def agents() -> dict[str, AgentSpec]:
    """The shipped agents by name, in `AGENT_MODULES` order (imported on first call)."""
    return load_agents(AGENT_MODULES)


def get_agent(name: str) -> AgentSpec:
    """The shipped agent called `name`, or UnknownAgentError listing the valid names."""
    return get_spec(agents(), name)
