"""What a sub-agent is: its spec (name, description, inputs, run) and how a set of them is loaded.

The set of shipped agents is `nodes.agents.AGENT_MODULES`; `load_agents(modules)` imports them and
checks each one's internal plan.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nodes.kit.ep_plans import internal_plan_of

if TYPE_CHECKING:
    from nodes.kit.step import StepContext
    from tools.contracts import AgentExecResult

__all__ = ["AgentSpec", "InputField", "UnknownAgentError", "get_spec", "load_agents"]


@dataclass(frozen=True)
class InputField:
    """An input a sub-agent needs: its name, what it means (shown to the planner), whether required.

    `kind` ("text" or "number") and `choices` say what a structured answer
    (`{"capacity_kw": 500}`) must give for it; the answer is checked before anything is written.
    """

    name: str
    description: str = ""
    required: bool = True
    kind: Literal["text", "number"] = "text"
    choices: tuple[str, ...] = ()

    def schema(self) -> dict[str, Any]:
        """The field as a JSON Schema property (`{"type": "number"}`, `{"type": "string", "enum": …}`)."""
        if self.choices:
            return {"type": "string", "enum": list(self.choices)}
        return {"type": "number" if self.kind == "number" else "string"}


@dataclass(frozen=True)
class AgentSpec:
    """A registered sub-agent.

    `run(ctx)` executes one plan step and returns an AgentExecResult; it must be safe to call
    again for the same step after an interrupt (it re-reads everything from `ctx`).
    `parse_answer(text)` turns a user's free-text answer into input fields (merged into the
    plan context on resume; the planner also reads a request's stated inputs with it).
    `produces` / `consumes` name results-index kinds (`StepContext.save_result`): a step depends
    on the earlier steps that produce what it consumes, and a producer step is left out when the
    conversation already holds its result and the user states nothing new. `claims(clause)` says
    from the clause's structure that it asks for this agent (e.g. a stated target); `recall(question,
    headline, lang)` answers a question about a figure of this agent's latest result (or "");
    `vocabulary()` adds texts the planner matches requests against (e.g. the knowledge base's
    titles). `serves(services, request)` is asked when no agent matched a request by words: True
    when the agent can serve it from the run's own data (the knowledge agent: a user's documents
    hold a relevant passage). `internal_plan` is the agent's internal plan (EP) as a `.dot` file — a relative path is
    read from `nodes/agents/plans/` — whose `toolCode`s must be among `tools`; it is checked when
    the registry loads (`nodes.kit.ep_plans`). `answer_fields` are further fields a structured
    answer to the agent's question may set by name (not listed to the planner); an answer setting
    any other field, or one of the wrong type, is refused (`nodes.ask_user.check_fields`).
    `offline=False` keeps the agent out of the offline planner's routing (an agent that only makes
    sense with a model, such as the general assistant). `agentic=True` says the agent runs the
    tool loop in model mode (`nodes.kit.agentic`): its node is drawn with the loop as a subgraph
    (Studio, `get_graph(xray=True)`). `defaults` names the inputs the agent otherwise takes from
    documented defaults: a value the user states for one of them as standing ("我们的电价是0.72")
    becomes that user's long-term fact and replaces the default in later requests
    (`nodes.standing`); `show(field, value, lang)` writes such a value for people ("自用电价 0.72
    元/kWh"); `check(field, value, lang)` says what is wrong with such a value ("" when it is
    plausible): an impossible one is named back, not kept.
    """

    name: str
    description: str
    run: Callable[[StepContext], AgentExecResult]
    examples: tuple[str, ...] = ()
    inputs: tuple[InputField, ...] = ()
    parse_answer: Callable[[str], dict] = field(default=lambda text: {})
    produces: tuple[str, ...] = ()
    consumes: tuple[str, ...] = ()
    claims: Callable[[str], bool] | None = None
    recall: Callable[[str, dict, str], str] | None = None
    vocabulary: Callable[[], Sequence[str]] | None = None
    serves: Callable[[Any, str], bool] | None = None
    tools: tuple[str, ...] = ()
    internal_plan: str | Path | None = None
    answer_fields: tuple[InputField, ...] = ()
    offline: bool = True
    agentic: bool = False
    defaults: tuple[str, ...] = ()
    show: Callable[[str, Any, str], str] | None = None
    check: Callable[[str, Any, str], str] | None = None

    @property
    def title(self) -> str:
        """The agent's name: the head of its description ("测算报告生成 report")."""
        return re.split(r"[：:]", self.description, maxsplit=1)[0]


class UnknownAgentError(KeyError):
    """Raised when a plan names an agent that is not registered; the message lists the valid names."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        super().__init__(f"unknown agent {name!r}; available: {', '.join(sorted(available))}")

    def __str__(self) -> str:
        return str(self.args[0])


def load_agents(modules: Iterable[str]) -> dict[str, AgentSpec]:
    """The agents defined by `modules` (each exposes `AGENT: AgentSpec`), by name, in the given order.

    Raises `nodes.kit.ep_plans.AgentPlanError` naming the file when an agent's internal plan is invalid.
    """
    found: dict[str, AgentSpec] = {}
    for module_name in modules:
        spec: AgentSpec = importlib.import_module(module_name).AGENT
        if spec.name in found:
            raise ValueError(f"agent name {spec.name!r} registered twice (in {module_name})")
        internal_plan_of(spec)  # raises AgentPlanError naming the file
        found[spec.name] = spec
    return found


def get_spec(specs: Mapping[str, AgentSpec], name: str) -> AgentSpec:
    """The agent called `name`, or UnknownAgentError listing the valid names."""
    try:
        return specs[name]
    except KeyError:
        raise UnknownAgentError(name, specs) from None
