"""Executor: dispatches ready steps (in parallel when independent), routes interrupts and the end."""

from __future__ import annotations

import json
import logging
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from graphs.context import Context, resolve_context
from graphs.state import State
from tools.contracts import AgentExecResult, PlanStep
from tools.plans.revise import to_review

__all__ = ["executor", "ready_steps"]

log = logging.getLogger("plangraph.executor")


def ready_steps(steps: list[PlanStep]) -> list[PlanStep]:
    """Steps that may run now: not finished, not waiting, every dependency completed."""
    done = {s["seqNo"] for s in steps if s["status"] == "completed"}
    return [
        s
        for s in steps
        if s["status"] in ("not_started", "in_progress") and all(d in done for d in s["dependsOn"])
    ]


def _blocked_by_failure(steps: list[PlanStep]) -> list[dict[str, Any]]:
    """Patches that fail every step whose dependency failed (transitively, one pass per level)."""
    status = {s["seqNo"]: s["status"] for s in steps}
    patches: list[dict[str, Any]] = []
    changed = True
    while changed:
        changed = False
        for s in steps:
            failed_deps = [d for d in s["dependsOn"] if status[d] == "failed"]
            if status[s["seqNo"]] == "not_started" and failed_deps:
                status[s["seqNo"]] = "failed"
                changed = True
                result = AgentExecResult(
                    recordId=f"skipped:{s['seqNo']}",
                    output=f"未执行：所依赖的步骤 {', '.join(map(str, failed_deps))} 失败。",
                    status="failed",
                    context={"skipped": True, "failedDependencies": failed_deps},
                )
                patches.append({"seqNo": s["seqNo"], "status": "failed", "result": result})
    return patches


def executor(state: State, runtime: Runtime[Context] | None = None) -> Command:
    """Run every ready step (one wave at a time); then ask about a waiting step; else finish.

    With a model and revisions left (`Context.plan_revisions`), steps that completed since the last
    look go to `revise_plan` first, which may change the remaining steps (nodes/revise_plan.py).
    """
    plan = state.get("plan")
    if plan is None:
        return Command(goto="finalizer")
    log.info(
        "plan %s state: %s", plan["planId"], json.dumps({s["seqNo"]: s["status"] for s in plan["steps"]})
    )
    skipped = _blocked_by_failure(plan["steps"])
    if skipped:
        return Command(goto="executor", update={"plan": {"planId": plan["planId"], "steps": skipped}})
    if runtime is not None:
        ctx = resolve_context(runtime.context)
        if ctx.model and to_review(plan, ctx.plan_revisions):
            return Command(goto="revise_plan")
    ready = ready_steps(plan["steps"])
    if not ready:
        waiting = any(s["status"] == "interrupted" for s in plan["steps"])
        return Command(goto="ask_user" if waiting else "finalizer")
    marked = {
        "planId": plan["planId"],
        "steps": [{"seqNo": s["seqNo"], "status": "in_progress"} for s in ready],
    }
    running = {**plan, "steps": [{**s, "status": "in_progress"} if s in ready else s for s in plan["steps"]]}
    return Command(
        update={"plan": marked},
        goto=[Send(s["agentName"], {"plan": running, "seqNo": s["seqNo"]}) for s in ready],
    )
