"""Wire contracts shared by planner, executor and sub-agents (field names fixed by DESIGN.md)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NotRequired, TypeVar

from typing_extensions import TypedDict

__all__ = [
    "artifact_file",
    "AgentChatResponse",
    "AgentExecResult",
    "ExecutionPlan",
    "PlanStep",
    "StepStatus",
    "StreamChunk",
    "artifacts_of",
    "find_cycle",
]

H = TypeVar("H", bound=Hashable)

StepStatus = Literal["not_started", "in_progress", "interrupted", "completed", "failed"]


class AgentExecResult(TypedDict):
    """What every sub-agent returns for its step.

    `output` is text for the next agent and the user (the question, when interrupted);
    `context` holds structured values for downstream agents (never concatenated into prompts).
    An interrupted result lists the missing input names in `context["missing"]`.
    """

    recordId: str
    output: str
    status: Literal["completed", "interrupted", "failed"]
    context: dict[str, Any]


class PlanStep(TypedDict):
    """One step of an ExecutionPlan."""

    seqNo: int
    agentName: str
    requirement: str
    status: StepStatus
    dependsOn: list[int]
    result: AgentExecResult | None


class ExecutionPlan(TypedDict):
    """The plan the executor runs; `context` collects user-supplied values (e.g. answers)."""

    planId: str
    userQuery: str
    steps: list[PlanStep]
    context: dict[str, Any]


class AgentChatResponse(TypedDict):
    """The card a front end shows when a step completes or is interrupted."""

    content: str
    intent: str
    data: dict[str, Any]


class StreamChunk(TypedDict):
    """One custom-stream event, tagged with the step's seqNo as `index`."""

    index: int
    content: str
    agentChatResponse: NotRequired[AgentChatResponse]


def artifacts_of(plan: ExecutionPlan) -> list[str]:
    """File paths the plan's steps produced, in step order, without duplicates.

    Relative to the data dir (older checkpoints: absolute); `artifact_file` makes a local path.
    """
    paths: list[str] = []
    for step in plan["steps"]:
        context = step["result"]["context"] if step["result"] else {}
        for path in context.get("artifacts", []):
            if path not in paths:
                paths.append(str(path))
    return paths


def artifact_file(data_dir: str | Path, name: str) -> Path:
    """The local file of an artifact named in a plan (relative to `data_dir`, or absolute)."""
    path = Path(name)
    return path if path.is_absolute() else Path(data_dir) / path


def find_cycle(after: Mapping[H, Sequence[H]]) -> list[H] | None:
    """A cycle of the directed graph `after` (node -> successors) as [a, b, …, a], or None.

    Iterative depth-first search, so a long chain of steps cannot exhaust the recursion limit.
    """
    state: dict[H, int] = {}  # 1 = on the current path, 2 = done
    for start in after:
        stack: list[tuple[H, int]] = [(start, 0)]
        path: list[H] = []
        while stack:
            node, i = stack.pop()
            if i == 0:
                if state.get(node) == 2:
                    continue
                state[node] = 1
                path.append(node)
            successors = after.get(node, ())
            if i < len(successors):
                stack.append((node, i + 1))
                nxt = successors[i]
                if state.get(nxt) == 1:
                    return [*path[path.index(nxt) :], nxt]
                if state.get(nxt) != 2:
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                path.pop()
    return None
