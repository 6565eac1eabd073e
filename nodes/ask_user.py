"""ask_user: suspends the run with the waiting step's question and merges the answer into the plan.

`interrupt()` re-runs this node from the top on resume, so nothing before it may have effects
that are not idempotent (saving the waiting plan is an upsert).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.kit.registry import AgentSpec
from nodes.kit.services import RunServices, ServicesFactory

__all__ = ["InvalidResumeError", "make_ask_user", "parse_resume"]

log = logging.getLogger("plangraph.executor")

EMPTY_ANSWER_HINT = "没有收到有效的回答。"


class InvalidResumeError(ValueError):
    """A resume value that carries no usable answer."""


def parse_resume(value: Any) -> tuple[str, dict[str, Any]]:
    """Split a resume value into free text and explicit fields.

    Accepts a string, `{"answer": "..."}`, or a dict of input fields (optionally with "answer").
    """
    if isinstance(value, str):
        text, fields = value.strip(), {}
    elif isinstance(value, dict):
        answer = value.get("answer", "")
        if not isinstance(answer, str):
            raise InvalidResumeError("'answer' must be text")
        text = answer.strip()
        fields = {k: v for k, v in value.items() if k != "answer" and v not in (None, "")}
    else:
        raise InvalidResumeError(f"resume value must be text or an object, not {type(value).__name__}")
    if not text and not fields:
        raise InvalidResumeError("the answer is empty")
    return text, fields


def make_ask_user(specs: Mapping[str, AgentSpec], services: ServicesFactory):  # noqa: ANN201 - a node
    """The ask_user node; `specs` parse free-text answers into input fields."""

    def ask_user(state: State, runtime: Runtime[Context]) -> Command[Literal["executor", "ask_user"]]:
        """Ask the question of the first waiting step; on resume, re-open only that step."""
        return _ask(state, services(resolve_context(runtime.context)), specs)

    return ask_user


def _ask(
    state: State, svc: RunServices, specs: Mapping[str, AgentSpec]
) -> Command[Literal["executor", "ask_user"]]:
    ctx = svc.ctx
    plan = state["plan"]
    assert plan is not None, "ask_user is only routed to with a plan"
    step = next(s for s in plan["steps"] if s["status"] == "interrupted")
    result: dict[str, Any] = dict(step["result"] or {})
    question = str(result.get("output") or "请补充信息。")
    hint = plan["context"].get("_retry_hint", {}).get(str(step["seqNo"]))
    payload = {
        "planId": plan["planId"],
        "seqNo": step["seqNo"],
        "question": f"{hint}{question}" if hint else question,
        "missing": list(result.get("context", {}).get("missing", [])),
    }
    svc.plans.save(
        plan,
        user_id=ctx.user_id,
        conversation_id=ctx.conversation_id,
        status="interrupted",
        question=str(payload["question"]),
    )
    value = interrupt(payload)
    try:
        text, fields = parse_resume(value)
    except InvalidResumeError as error:
        log.warning("plan %s step %s: rejected resume value (%s)", plan["planId"], step["seqNo"], error)
        hints = {**plan["context"].get("_retry_hint", {}), str(step["seqNo"]): EMPTY_ANSWER_HINT}
        return Command(
            goto="ask_user", update={"plan": {"planId": plan["planId"], "context": {"_retry_hint": hints}}}
        )
    # Answered. The plan store still says "interrupted" until the answered step starts again
    # (nodes/kit/agent_node.py), after this node's checkpoint is written: the store never claims more
    # than the checkpoint holds.
    spec = specs.get(step["agentName"])
    parsed = spec.parse_answer(text) if (spec and text) else {}
    answers = {k: list(v) for k, v in plan["context"].get("answers", {}).items()}
    if text:
        answers.setdefault(str(step["seqNo"]), []).append(text)
    hints = {k: v for k, v in plan["context"].get("_retry_hint", {}).items() if k != str(step["seqNo"])}
    log.info(
        "plan %s step %s resumed with fields %s", plan["planId"], step["seqNo"], sorted({**parsed, **fields})
    )
    return Command(
        goto="executor",
        update={
            "plan": {
                "planId": plan["planId"],
                "steps": [{"seqNo": step["seqNo"], "status": "not_started"}],
                "context": {**parsed, **fields, "answers": answers, "_retry_hint": hints},
            }
        },
    )
