"""The plan-node status machine (seeds/003 §3.2): six Chinese labels, one transition table.

Labels and step statuses (`tools.contracts.StepStatus`):

| label        | step status   | meaning                                                   |
|--------------|---------------|-----------------------------------------------------------|
| 待初始化     | not_started   | not ready: a dependency has not completed yet             |
| 待运行       | not_started   | ready: every dependency completed (or the user answered)  |
| 运行中       | in_progress   | being executed                                            |
| 待用户输入中 | interrupted   | waiting for the user's answer to a question               |
| 完成         | completed     | done; its result is final                                 |
| 失败         | failed        | failed after retries, or skipped because a dependency did |

A step's `not_started` is shown as 待运行 when all its dependencies are completed and as
待初始化 otherwise (`step_labels`); both labels read back as `not_started`.

Each transition has exactly one driver, as the seed splits them: the **model** decides about
content (inputs are complete, a question must be asked); the **framework** schedules and records
outcomes (start, finish, fail, the user's answer arrived). A model refreshing a plan may only make
model-driven changes; `transition` enforces that.
"""

from __future__ import annotations

from typing import Literal

from tools.contracts import ExecutionPlan, StepStatus

__all__ = [
    "STATUS_LABELS",
    "TRANSITIONS",
    "Actor",
    "IllegalTransitionError",
    "StatusLabel",
    "allowed_next",
    "check_step_transition",
    "label_of",
    "step_labels",
    "step_status_of",
    "transition",
]

StatusLabel = Literal["待初始化", "待运行", "运行中", "待用户输入中", "完成", "失败"]
Actor = Literal["model", "framework"]

STATUS_LABELS: tuple[StatusLabel, ...] = ("待初始化", "待运行", "运行中", "待用户输入中", "完成", "失败")

# The only allowed transitions, each with the one actor that drives it.
TRANSITIONS: dict[tuple[StatusLabel, StatusLabel], Actor] = {
    ("待初始化", "待运行"): "model",  # the model filled the node's inputs: it may run
    ("待初始化", "待用户输入中"): "model",  # the model must ask the user before the node can run
    ("待运行", "待用户输入中"): "model",  # on reflection, the model still lacks an input
    ("运行中", "待用户输入中"): "model",  # while running, the agent found an input missing
    ("待运行", "运行中"): "framework",  # the scheduler picked the node up
    ("运行中", "完成"): "framework",  # execution succeeded
    ("运行中", "失败"): "framework",  # execution failed after retries
    ("待用户输入中", "待运行"): "framework",  # the user's answer arrived; run the node again
    ("待初始化", "失败"): "framework",  # skipped: a dependency failed
}

_TO_STEP: dict[StatusLabel, StepStatus] = {
    "待初始化": "not_started",
    "待运行": "not_started",
    "运行中": "in_progress",
    "待用户输入中": "interrupted",
    "完成": "completed",
    "失败": "failed",
}


class IllegalTransitionError(ValueError):
    """A status change the table does not allow (or not for this actor)."""

    def __init__(self, current: str, new: str, actor: str) -> None:
        self.current, self.new, self.actor = current, new, actor
        self.allowed = allowed_next(current, actor) if current in STATUS_LABELS else ()  # type: ignore[arg-type]
        driver = dict(TRANSITIONS).get((current, new))  # type: ignore[arg-type]
        if current not in STATUS_LABELS or new not in STATUS_LABELS:
            bad = current if current not in STATUS_LABELS else new
            reason = f"unknown status {bad!r}; valid statuses: {', '.join(STATUS_LABELS)}"
        elif driver is not None:
            reason = f"{current} → {new} is driven by the {driver}, not the {actor}"
        else:
            reason = f"{current} → {new} is not an allowed transition"
        options = ", ".join(self.allowed) or "none (final or waiting for the other actor)"
        super().__init__(f"{reason}; the {actor} may move {current} to: {options}")


def allowed_next(current: StatusLabel, actor: Actor | None = None) -> tuple[StatusLabel, ...]:
    """Statuses reachable from `current` in one step (by `actor`, or by anyone when None)."""
    return tuple(new for (old, new), who in TRANSITIONS.items() if old == current and actor in (None, who))


def transition(current: StatusLabel, new: StatusLabel, actor: Actor) -> StatusLabel:
    """Return `new` when `actor` may move a node from `current` to it; keeping a status is allowed.

    Raises IllegalTransitionError naming the statuses `actor` may choose instead.
    """
    if current == new and current in STATUS_LABELS:
        return new
    if TRANSITIONS.get((current, new)) != actor:
        raise IllegalTransitionError(current, new, actor)
    return new


def step_status_of(label: StatusLabel) -> StepStatus:
    """The ExecutionPlan step status for a label (待初始化 and 待运行 are both not_started)."""
    return _TO_STEP[label]


def label_of(status: StepStatus, ready: bool = True) -> StatusLabel:
    """The label for a step status; `ready` picks 待运行 over 待初始化 for not_started."""
    if status == "not_started":
        return "待运行" if ready else "待初始化"
    return next(label for label, step in _TO_STEP.items() if step == status)


def step_labels(plan: ExecutionPlan) -> dict[int, StatusLabel]:
    """Label of every step by seqNo; not_started is 待运行 once all dependencies completed."""
    done = {s["seqNo"] for s in plan["steps"] if s["status"] == "completed"}
    return {s["seqNo"]: label_of(s["status"], all(d in done for d in s["dependsOn"])) for s in plan["steps"]}


def check_step_transition(current: StepStatus, new: StepStatus, actor: Actor) -> StepStatus:
    """Check a step-status change the way `transition` checks labels; return `new`.

    not_started is read as 待运行 when leaving it (the executor only starts ready steps) and as
    待运行 when entering it (an answered question); not_started → failed is a skipped step.
    """
    if current == new:
        return new
    start: StatusLabel = "待初始化" if (current, new) == ("not_started", "failed") else label_of(current)
    transition(start, label_of(new), actor)
    return new
