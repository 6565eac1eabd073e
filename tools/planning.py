"""Planning tools the executor offers the planner: `list_agents` and `create_plan`.

The executor owns the plan schema: `create_plan` validates steps against the registry, so a plan
naming an unknown agent or containing a cycle never reaches the executor.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from tools.contracts import ExecutionPlan, PlanStep, find_cycle

__all__ = [
    "MAX_REQUIREMENT_CHARS",
    "MAX_STEPS",
    "CreatePlanArgs",
    "PlanValidationError",
    "StepArgs",
    "describe_agents",
    "make_planning_tools",
    "new_plan",
    "validate_steps",
]


# A plan is a handful of steps; the bounds keep a model's mistake (a step numbered 2**70 or -1, a
# requirement of 800k characters) a validation error instead of a crash or a huge state.
MAX_STEPS = 64
MAX_REQUIREMENT_CHARS = 4000


class PlanValidationError(ValueError):
    """A plan the executor cannot run; the message says what to change."""


class StepArgs(BaseModel):
    """One step as the planner proposes it."""

    seqNo: int = Field(description="Step number, unique within the plan, starting at 0.")
    agentName: str = Field(description="Name of a registered agent (see list_agents).")
    requirement: str = Field(description="What this step must achieve, in the user's language.")
    dependsOn: list[int] = Field(default_factory=list, description="seqNos this step needs first.")


class CreatePlanArgs(BaseModel):
    """Arguments of `create_plan`."""

    steps: list[StepArgs] = Field(description="The plan's steps; independent steps may run in parallel.")


def validate_steps(steps: Iterable[Mapping], valid_agents: Iterable[str]) -> list[PlanStep]:
    """Check steps (unique seqNos, known agents, known dependencies, no cycle) and normalise them."""
    names = sorted(valid_agents)
    items = [dict(s) for s in steps]
    if not items:
        raise PlanValidationError("the plan has no steps; add at least one step with an agentName.")
    if len(items) > MAX_STEPS:
        raise PlanValidationError(f"the plan has {len(items)} steps; use at most {MAX_STEPS}.")
    seen: set[int] = set()
    for item in items:
        number = item.get("seqNo")
        if type(number) is not int or not 0 <= number < MAX_STEPS:
            raise PlanValidationError(
                f"step seqNo {str(number)[:24]!r} is not a step number; number the steps 0, 1, 2, … (below {MAX_STEPS})."
            )
        requirement = item.get("requirement") or ""
        if not isinstance(requirement, str) or len(requirement) > MAX_REQUIREMENT_CHARS:
            raise PlanValidationError(
                f"step {number}: the requirement has {len(str(requirement))} characters; "
                f"state what the step must achieve in at most {MAX_REQUIREMENT_CHARS}."
            )
        if any(type(d) is not int for d in item.get("dependsOn", [])):
            raise PlanValidationError(f"step {number}: dependsOn must list step numbers (integers).")
        if item.get("agentName") not in names:
            raise PlanValidationError(
                f"step {item.get('seqNo')}: unknown agent {item.get('agentName')!r}; available: {', '.join(names)}"
            )
        if item["seqNo"] in seen:
            raise PlanValidationError(f"seqNo {item['seqNo']} is used twice; give every step its own seqNo.")
        seen.add(item["seqNo"])
    for item in items:
        unknown = [d for d in item.get("dependsOn", []) if d not in seen]
        if unknown:
            raise PlanValidationError(f"step {item['seqNo']} depends on missing step(s) {unknown}.")
    _check_acyclic({i["seqNo"]: list(i.get("dependsOn", [])) for i in items})
    return [
        PlanStep(
            seqNo=int(i["seqNo"]),
            agentName=str(i["agentName"]),
            requirement=str(i.get("requirement") or ""),
            status="not_started",
            dependsOn=sorted(set(i.get("dependsOn", []))),
            result=None,
        )
        for i in sorted(items, key=lambda i: i["seqNo"])
    ]


def _check_acyclic(deps: dict[int, list[int]]) -> None:
    cycle = find_cycle({node: sorted(after) for node, after in sorted(deps.items())})
    if cycle is not None:
        raise PlanValidationError(
            f"dependsOn forms a cycle: {' -> '.join(map(str, cycle))}; remove one edge."
        )


def new_plan(user_query: str, steps: list[PlanStep], context: dict | None = None) -> ExecutionPlan:
    """A fresh ExecutionPlan with a new id."""
    return ExecutionPlan(
        planId=f"plan_{uuid.uuid4().hex[:12]}", userQuery=user_query, steps=steps, context=context or {}
    )


def describe_agents(specs: Mapping) -> list[dict]:
    """The registry as the planner sees it: name, description, inputs, examples."""
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "inputs": [
                {"name": f.name, "required": f.required, "description": f.description} for f in spec.inputs
            ],
            "examples": list(spec.examples[:3]),
        }
        for spec in specs.values()
    ]


def make_planning_tools(specs: Mapping) -> list[StructuredTool]:
    """`list_agents` and `create_plan` bound to a registry (errors come back as error ToolMessages)."""

    def list_agents() -> str:
        """List the agents that can run plan steps, with what each needs."""
        return json.dumps(describe_agents(specs), ensure_ascii=False)

    def create_plan(steps: list[StepArgs]) -> str:
        """Create the execution plan: one step per agent call, with dependsOn between steps."""
        try:
            validated = validate_steps(
                [s.model_dump() if isinstance(s, BaseModel) else s for s in steps], specs
            )
        except PlanValidationError as error:
            raise ToolException(f"Error: {error}") from None
        return json.dumps({"ok": True, "steps": validated}, ensure_ascii=False)

    return [
        StructuredTool.from_function(list_agents),
        StructuredTool.from_function(
            create_plan, args_schema=CreatePlanArgs, handle_tool_error=True, handle_validation_error=_bad_args
        ),
    ]


def _bad_args(error: Exception) -> str:
    return f"Error: create_plan arguments do not match its schema ({error}); send steps as a list of objects."
