"""revise_plan: with a model, after steps complete, the model may change the plan's remaining steps.

The executor routes here when steps completed that no revision has looked at yet and fewer than
`Context.plan_revisions` revisions were applied (offline it never does). One review = one model call
in the seed's `@epupdatelog@` / `@EP@` format (`tools/plans/revise.py`), plus one retry that tells
the model exactly what was wrong, all within one `model_timeout`. The outcome — applied, unchanged or
rejected — is appended to the plan's revision log (`context["revisions"]`, shown as the DOT graph
attribute `epupdatelog`), together with the steps it looked at, so a resumed run never reviews
them again. A rejected answer or a failing model call leaves the plan as it was.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from graphs.context import Context, resolve_context
from graphs.state import State, merge_plan
from nodes.kit.registry import AgentSpec
from nodes.kit.services import ServicesFactory
from tools.contracts import ExecutionPlan, StreamChunk
from tools.faults import ModelFaultError, ModelRejectedError
from tools.lang import detect_language, pick
from tools.planning import describe_agents
from tools.plans.reflect import PlanUpdateError
from tools.plans.revise import (
    REVISE_FIX_PROMPT,
    REVISE_FIX_PROMPT_EN,
    REVISE_PROMPT,
    REVISE_PROMPT_EN,
    PlanRevision,
    parse_plan_update,
    retired_steps,
    revision_request,
    to_review,
)

__all__ = ["REVISE_ATTEMPTS", "make_revise_plan", "review"]

log = logging.getLogger("plangraph.revise")

REVISE_ATTEMPTS = 2  # the first answer and one corrected answer
NOTE_CHARS = 500  # longest model note (or error) kept in the log, which lives in the plan state


def review(
    model: BaseChatModel, plan: ExecutionPlan, after: Sequence[int], specs: Mapping[str, AgentSpec]
) -> tuple[dict[str, Any], PlanRevision | None]:
    """Ask `model` to revise `plan` after steps `after` completed: the log entry and the revision to apply.

    The revision is None unless it changes the plan. Model faults and invalid answers end in a
    "rejected" entry carrying the reason; nothing here raises for what the model did. The model is
    asked in the plan's language (the planner's `context["lang"]`, else the request's).
    """
    lang = str(plan["context"].get("lang") or detect_language(plan["userQuery"]))
    messages: list[BaseMessage] = [
        SystemMessage(content=pick(lang, REVISE_PROMPT, REVISE_PROMPT_EN)),
        HumanMessage(content=revision_request(plan, after, describe_agents(specs), lang)),
    ]
    errors: list[str] = []
    entry: dict[str, Any] = {"after": list(after)}
    for _ in range(REVISE_ATTEMPTS):
        try:
            reply = model.invoke(messages)
        except (ModelFaultError, ModelRejectedError) as error:
            errors.append(f"model call failed: {error}"[:NOTE_CHARS])
            break
        try:
            revision = parse_plan_update(reply.text, plan, specs, retired_steps(plan))
        except PlanUpdateError as error:
            errors.append(str(error)[:NOTE_CHARS])
            messages += [
                AIMessage(content=reply.text),
                HumanMessage(content=pick(lang, REVISE_FIX_PROMPT, REVISE_FIX_PROMPT_EN).format(error=error)),
            ]
            continue
        entry |= {
            "status": "applied" if revision.changed else "unchanged",
            "note": revision.note[:NOTE_CHARS],
        }
        entry |= {
            k: list(getattr(revision, k))
            for k in ("added", "dropped", "rewired", "rewritten")
            if getattr(revision, k)
        }
        if errors:
            entry["errors"] = errors
        return entry, revision if revision.changed else None
    return entry | {"status": "rejected", "note": errors[-1][:NOTE_CHARS], "errors": errors}, None


def _patch(plan: ExecutionPlan, entry: dict[str, Any], revision: PlanRevision | None) -> dict[str, Any]:
    """The plan update: the log entry, and the revision's new and changed steps and dropped ones."""
    context: dict[str, Any] = {"revisions": [*plan["context"].get("revisions", []), entry]}
    patch: dict[str, Any] = {"planId": plan["planId"], "context": context}
    if revision is not None:
        touched = {*revision.added, *revision.rewired, *revision.rewritten}
        patch["steps"] = [dict(s) for s in revision.steps if s["seqNo"] in touched]
        patch["dropSteps"] = list(revision.dropped)
        if revision.added or revision.rewritten:
            context["requirements_by"] = "model"  # a model-written requirement is not the user's words
    return patch


def _announce(entry: dict[str, Any], lang: str) -> str:
    english = lang == "en"
    words = (
        (("added", "added"), ("dropped", "dropped"), ("rewired", "reordered"), ("rewritten", "rewritten"))
        if english
        else (("added", "新增"), ("dropped", "删除"), ("rewired", "调整顺序"), ("rewritten", "改写"))
    )
    changes = ("; " if english else "，").join(
        f"{word} {', '.join(map(str, entry[key]))}" for key, word in words if entry.get(key)
    )
    if english:
        return f"Plan revised ({changes}): {entry['note']}"
    return f"计划已调整（{changes}）：{entry['note']}"


def make_revise_plan(specs: Mapping[str, AgentSpec], services: ServicesFactory):  # noqa: ANN201 - a node
    """The revise_plan node for a set of agents."""

    def revise_plan(state: State, runtime: Runtime[Context]) -> Command[Literal["executor"]]:
        """Review the newly completed steps once; apply a valid revision; log every outcome."""
        svc = services(resolve_context(runtime.context))
        plan = state.get("plan")
        model = svc.model_for("plan")
        after = [] if plan is None else to_review(plan, svc.ctx.plan_revisions)
        if plan is None or not after:
            return Command(goto="executor")
        if model is None:  # the run names a model but its services have none: log it, never loop
            entry, revision = (
                {"after": after, "status": "rejected", "note": "no chat model in this run"},
                None,
            )
        else:
            from tools.model import call_deadline  # the model client loads only when a model runs

            with call_deadline(time.monotonic() + svc.ctx.model_timeout):  # both attempts together
                entry, revision = review(model, plan, after, specs)
        patch = _patch(plan, entry, revision)
        if entry["status"] == "rejected":
            log.warning("plan %s kept after steps %s: %s", plan["planId"], after, entry["note"])
        else:
            log.info("plan %s after steps %s: %s (%s)", plan["planId"], after, entry["status"], entry["note"])
        if revision is not None:
            runtime.stream_writer(
                StreamChunk(index=after[-1], content=_announce(entry, str(plan["context"].get("lang", ""))))
            )
            revised = merge_plan(plan, patch)
            assert revised is not None
            ctx = svc.ctx
            svc.plans.save(
                revised, user_id=ctx.user_id, conversation_id=ctx.conversation_id, status="running"
            )
        return Command(goto="executor", update={"plan": patch})

    return revise_plan
