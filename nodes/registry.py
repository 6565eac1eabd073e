"""The agent registry: which sub-agents exist, what they need, and how to run them.

Adding a sub-agent is one module exposing `AGENT: AgentSpec` plus one line in `AGENT_MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nodes.step import StepContext
    from tools.contracts import AgentExecResult

__all__ = ["AGENT_MODULES", "AgentSpec", "InputField", "UnknownAgentError", "agents", "get_agent"]

# One entry per sub-agent module; each module defines `AGENT: AgentSpec`.
AGENT_MODULES: tuple[str, ...] = (
    "nodes.pv_calc",
    "nodes.sensitivity",
    "nodes.reverse_opt",
    "nodes.report",
    "nodes.knowledge",
)


@dataclass(frozen=True)
class InputField:
    """An input a sub-agent needs; `question` is asked (in Chinese) when it is missing."""

    name: str
    question: str
    required: bool = True
    description: str = ""


@dataclass(frozen=True)
class AgentSpec:
    """A registered sub-agent.

    `run(ctx)` executes one plan step and returns an AgentExecResult; it must be safe to call
    again for the same step after an interrupt (it re-reads everything from `ctx`).
    `parse_answer(text)` turns a user's free-text answer into input fields (merged into the
    plan context on resume). `produces` names the result an earlier step of this agent leaves in
    memory, so the planner can skip the step when the user already has it. `internal_plan` is
    the agent's internal plan (EP) as a `.dot` file — a relative path is read from
    `data/workflows/agents/` — whose `toolCode`s must be among `tools`; it is checked when the
    registry loads (`nodes.ep_plans`).
    """

    name: str
    description: str
    run: Callable[[StepContext], AgentExecResult]
    examples: tuple[str, ...] = ()
    inputs: tuple[InputField, ...] = ()
    parse_answer: Callable[[str], dict] = field(default=lambda text: {})
    produces: tuple[str, ...] = ()
    reuse_phrases: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    internal_plan: str | Path | None = None


class UnknownAgentError(KeyError):
    """Raised when a plan names an agent that is not registered."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown agent {name!r}; available: {', '.join(sorted(agents()))}")

    def __str__(self) -> str:
        return str(self.args[0])


@cache
def agents() -> dict[str, AgentSpec]:
    """All registered agents by name, in registry order (modules imported on first call).

    Raises `nodes.ep_plans.AgentPlanError` naming the file when an agent's internal plan is invalid.
    """
    from nodes.ep_plans import internal_plan_of

    found: dict[str, AgentSpec] = {}
    for module_name in AGENT_MODULES:
        spec: AgentSpec = importlib.import_module(module_name).AGENT
        if spec.name in found:
            raise ValueError(f"agent name {spec.name!r} registered twice (in {module_name})")
        internal_plan_of(spec)  # raises AgentPlanError naming the file
        found[spec.name] = spec
    return found


def get_agent(name: str) -> AgentSpec:
    """The agent called `name`, or UnknownAgentError listing the valid names."""
    try:
        return agents()[name]
    except KeyError:
        raise UnknownAgentError(name) from None
