"""Agents' internal-plan files (EP templates): where they live, how they are checked, how to show one.

An agent names its file in `AgentSpec.internal_plan` (a relative path is read from the shipped
`nodes/agents/plans/`). The registry checks every file when it loads (`internal_plan_of`):
valid DOT, only `function` / `multiFunction` / `confirm` nodes, no run-time values, and only
tools the agent declares in `AgentSpec.tools` as `toolCode`. `step_internal_plan` finds the EP
of a plan step for `plangraph plan --step N`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.plans.dot import InternalPlan, PlanFormatError, dot_to_internal_plan

if TYPE_CHECKING:
    from nodes.kit.registry import AgentSpec
    from tools.contracts import ExecutionPlan

__all__ = [
    "AGENT_PLANS_DIR",
    "AgentPlanError",
    "NoInternalPlanError",
    "internal_plan_json",
    "internal_plan_of",
    "load_internal_plan",
    "plan_path",
    "step_internal_plan",
]

AGENT_PLANS_DIR = Path(str(files("nodes") / "agents" / "plans"))
_TOOL_TYPES = ("function", "multiFunction")


class AgentPlanError(ValueError):
    """An agent's internal-plan file that cannot be used; the message names the file and the fix."""


class NoInternalPlanError(LookupError):
    """The step or its internal plan does not exist (message in Chinese, for the user)."""


def plan_path(path: str | Path) -> Path:
    """`path` itself when absolute, else the file of that name in the shipped `nodes/agents/plans/`."""
    given = Path(path).expanduser()
    return given if given.is_absolute() else AGENT_PLANS_DIR / given


@cache
def load_internal_plan(path: Path, tools: tuple[str, ...], agent: str) -> InternalPlan:
    """Read and check an agent's EP file: valid DOT, no run-time values, only `tools` as toolCode."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise AgentPlanError(
            f"{path}: cannot read {agent}'s internal plan ({err}); fix internal_plan or the file"
        ) from None
    try:
        plan = dot_to_internal_plan(text, plan_id=agent)
    except PlanFormatError as err:
        raise AgentPlanError(f"{path}: {err}") from None
    for node in plan.nodes:
        filled = [k for k in ("tool_input", "tool_output", "answer") if getattr(node, k)]
        if node.status != "待初始化" or filled:
            raise AgentPlanError(
                f"{path}: node {node.id} has a status or run-time values; an internal-plan file describes nodes only"
            )
        if node.type in _TOOL_TYPES and not node.tools():
            raise AgentPlanError(
                f'{path}: node {node.id} is a {node.type} node without toolCode; add toolCode="…"'
            )
        if node.type == "function" and len(node.tools()) > 1:
            raise AgentPlanError(f'{path}: node {node.id} names several tools; use type="multiFunction"')
        unknown = [t for t in node.tools() if t not in tools]
        if unknown:
            raise AgentPlanError(
                f"{path}: node {node.id}: unknown tool {unknown[0]!r}; {agent} records: {', '.join(tools) or '(none)'}"
            )
    return plan


def internal_plan_of(spec: AgentSpec) -> InternalPlan | None:
    """The agent's checked internal plan (all nodes 待初始化), or None when it has none."""
    if spec.internal_plan is None:
        return None
    return load_internal_plan(plan_path(spec.internal_plan), tuple(spec.tools), spec.name)


def step_internal_plan(
    plan: ExecutionPlan,
    seq_no: int,
    specs: Mapping[str, AgentSpec],
    load: Callable[[str], Mapping[str, Any]] | None = None,
) -> InternalPlan:
    """The EP of step `seq_no`: from its latest result, else the agent's plan before it runs.

    A result keeps its EP as DOT or as a `store://` id, which `load` resolves.
    """
    step = next((s for s in plan["steps"] if s["seqNo"] == seq_no), None)
    if step is None:
        numbers = ", ".join(str(s["seqNo"]) for s in plan["steps"])
        raise NoInternalPlanError(f"计划里没有步骤 {seq_no}；可选的步骤：{numbers}。")
    result = step["result"]
    dot = result["context"].get("ep") if result else None
    if isinstance(dot, str) and dot.startswith("store://") and load is not None:
        dot = load(dot).get("dot")
    if isinstance(dot, str):
        return dot_to_internal_plan(dot)
    spec = specs.get(step["agentName"])
    template = internal_plan_of(spec) if spec is not None else None
    if template is None:
        raise NoInternalPlanError(f"步骤 {seq_no}（{step['agentName']}）没有内部执行计划。")
    return replace(template, id=f"{plan['planId']}:{seq_no}")


def internal_plan_json(plan: InternalPlan) -> dict[str, Any]:
    """The EP as plain JSON data: id, nodes (all attributes) and edges."""
    return {
        "id": plan.id,
        "nodes": [{**asdict(n), "extra": dict(n.extra)} for n in plan.nodes],
        "edges": [list(e) for e in plan.edges],
    }
