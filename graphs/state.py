"""Graph state: the narrow input, the full state, the output, and their reducers."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from memory.disclosure import WindowRef
from tools.contracts import ExecutionPlan
from tools.plans.status import check_step_transition

__all__ = ["InputState", "OutputState", "State", "StepInput", "merge_plan"]


def merge_plan(current: ExecutionPlan | None, update: dict[str, Any] | None) -> ExecutionPlan | None:
    """Reducer for `plan`: a new planId replaces the plan; the same planId patches it.

    A patch carries `planId` and any of `steps` (each matched by `seqNo`; its fields override;
    an unknown seqNo adds a step), `dropSteps` (seqNos removed; only steps that have not started,
    anything else raises ValueError: a revision never loses finished work), `context` (keys
    override) and `userQuery`. Parallel steps patch different seqNos, so their updates commute.
    `None` clears the plan. Every status change is checked against the status machine
    (`tools.plans.status`): an illegal one raises `IllegalTransitionError`.
    """
    if update is None:
        return None
    if current is None or update.get("planId") != current["planId"]:
        return ExecutionPlan(**update)  # type: ignore[typeddict-item]
    by_seq = {step["seqNo"]: dict(step) for step in current["steps"]}
    for seq in update.get("dropSteps", []):
        status = by_seq.get(seq, {}).get("status")
        if status not in (None, "not_started"):
            raise ValueError(f"step {seq} is {status}; only steps that have not started can be dropped")
        by_seq.pop(seq, None)
    for patch in update.get("steps", []):
        before: dict[str, Any] = by_seq.get(patch["seqNo"], {})
        if "status" in patch and "status" in before:
            new = patch["status"]
            # Asking the user is the agent's (model's) decision; every other change is the framework's.
            check_step_transition(before["status"], new, "model" if new == "interrupted" else "framework")
        by_seq[patch["seqNo"]] = {**before, **patch}
    return ExecutionPlan(
        planId=current["planId"],
        userQuery=update.get("userQuery", current["userQuery"]),
        steps=[by_seq[k] for k in sorted(by_seq)],  # type: ignore[misc]
        context={**current["context"], **update.get("context", {})},
    )


class InputState(TypedDict):
    """What a caller sends: chat messages (Studio's chat form works with it)."""

    messages: Annotated[list[AnyMessage], add_messages]


class OutputState(TypedDict):
    """What a run returns."""

    messages: Annotated[list[AnyMessage], add_messages]
    plan: Annotated[ExecutionPlan | None, merge_plan]
    summary: str


class State(InputState):
    """Full graph state. Large results live in the offload store; the plan carries references."""

    plan: Annotated[ExecutionPlan | None, merge_plan]
    summary: str
    window: WindowRef | None  # the planner's disclosed window, by reference (nodes/disclose.py)


class StepInput(TypedDict):
    """Payload the executor `Send`s to a sub-agent node: the plan and the step to run."""

    plan: ExecutionPlan
    seqNo: int
