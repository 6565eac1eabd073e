"""ask_user: suspends the run with the waiting step's question and merges the answer into the plan.

`interrupt()` re-runs this node from the top on resume, so nothing before it may have effects
that are not idempotent (saving the waiting plan is an upsert).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.kit.registry import AgentSpec
from nodes.kit.services import RunServices, ServicesFactory

__all__ = [
    "AnswerTooLongError",
    "InvalidResumeError",
    "answer_schema",
    "check_fields",
    "make_ask_user",
    "parse_resume",
]

log = logging.getLogger("plangraph.executor")

EMPTY_ANSWER_HINT = "没有收到有效的回答。"


class InvalidResumeError(ValueError):
    """A resume value that carries no usable answer."""


class AnswerTooLongError(InvalidResumeError):
    """An answer longer than a request may be (`Context.max_request_chars`)."""


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # as plangraph.runner drops them


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


def answer_schema(spec: AgentSpec | None) -> dict[str, dict[str, Any]]:
    """The fields a structured answer to `spec`'s question may set, as JSON Schema properties."""
    if spec is None:
        return {}
    return {f.name: f.schema() for f in (*spec.inputs, *spec.answer_fields)}


def check_fields(fields: Mapping[str, Any], schema: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise InvalidResumeError naming the first field `schema` does not allow, or of the wrong type."""
    names = "、".join(schema) or "（无：请用文字回答）"
    for name, value in fields.items():
        rule = schema.get(name)
        if rule is None:
            raise InvalidResumeError(f"这个问题没有字段 {name!r}，可用的字段：{names}")
        expected = _expected(rule)
        if rule.get("type") == "number":
            ok = isinstance(value, int) and not isinstance(value, bool)  # its range: PlanRunner
            ok = ok or (isinstance(value, float) and math.isfinite(value))
        else:
            ok = isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_FIELD_CHARS
            ok = ok and ("enum" not in rule or value in rule["enum"])
        if not ok:
            raise InvalidResumeError(f"字段 {name} 应为{expected}，收到的是{_shown(value)}")


MAX_FIELD_CHARS = 200  # longest text one answer field may hold


def _expected(rule: Mapping[str, Any]) -> str:
    if "enum" in rule:
        return "以下之一：" + "、".join(f'"{choice}"' for choice in rule["enum"])
    if rule.get("type") == "number":
        return "数字（如 500，不带单位和引号）"
    return f"文字（1–{MAX_FIELD_CHARS} 个字符）"


_KINDS: tuple[tuple[Any, str], ...] = (
    (bool, "true/false"),
    (int | float, "数字"),
    (str, "文字"),
    (list | tuple, "列表"),
    (dict, "对象"),
)


def _shown(value: Any) -> str:
    """`value` as the user sent it (JSON), with what kind of value it is."""
    kind = next((name for types, name in _KINDS if isinstance(value, types)), type(value).__name__)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f"{kind} {text[:60]}{'…' if len(text) > 60 else ''}"


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
    spec = specs.get(step["agentName"])
    schema = answer_schema(spec)
    payload = {
        "planId": plan["planId"],
        "seqNo": step["seqNo"],
        "question": f"{hint}{question}" if hint else question,
        "missing": list(result.get("context", {}).get("missing", [])),
        "fields": schema,  # what a structured answer may set (checked before it is used)
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
        check_fields(fields, schema)
        text = _CONTROL.sub("", text)
        if len(text) > ctx.max_request_chars:
            raise AnswerTooLongError(f"回答过长（{len(text)} 字，最多 {ctx.max_request_chars} 字）")
    except InvalidResumeError as error:
        # PlanRunner refuses these before anything is written; a resume sent another way (LangGraph
        # server, Studio) is answered with the same question, saying what was wrong.
        log.warning("plan %s step %s: rejected resume value (%s)", plan["planId"], step["seqNo"], error)
        said = isinstance(value, dict) or isinstance(error, AnswerTooLongError)
        hint = f"{EMPTY_ANSWER_HINT[:-1]}（{error}）。" if said else EMPTY_ANSWER_HINT
        hints = {**plan["context"].get("_retry_hint", {}), str(step["seqNo"]): hint}
        return Command(
            goto="ask_user", update={"plan": {"planId": plan["planId"], "context": {"_retry_hint": hints}}}
        )
    # Answered. The plan store still says "interrupted" until the answered step starts again
    # (nodes/kit/agent_node.py), after this node's checkpoint is written: the store never claims more
    # than the checkpoint holds.
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
