"""Finalizer: summarises every step (failures named), persists the finished plan."""

from __future__ import annotations

import logging

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.kit.services import ServicesFactory
from tools.contracts import ExecutionPlan, artifacts_of
from tools.faults import model_errors
from tools.model.checks import computed_numbers, unsupported_claims

__all__ = ["FINALIZER_PROMPT", "make_finalizer", "standing_line", "template_summary"]

log = logging.getLogger("plangraph.finalizer")

FINALIZER_PROMPT = """你是总结器。根据各步骤的执行结果，用中文给用户写一段简洁的总结：
先给结论（关键数字），再列出每个步骤的结果；失败的步骤要点名并说明原因；列出生成的文件路径。
只使用给出的结果，不要编造数字。"""
_STATUS = {
    "zh": {
        "completed": "完成",
        "failed": "失败",
        "interrupted": "待用户输入",
        "not_started": "未执行",
        "in_progress": "运行中",
    },
    "en": {
        "completed": "done",
        "failed": "failed",
        "interrupted": "waiting for you",
        "not_started": "not run",
        "in_progress": "running",
    },
}
_WORDS = {
    "zh": (
        "计划执行结束：{done}/{total} 个步骤完成。",
        "【步骤 {seq} · {agent} · {status}】",
        "失败的步骤：{steps}。",
        "生成的文件：",
    ),
    "en": (
        "Plan finished: {done} of {total} steps done.",
        "[Step {seq} · {agent} · {status}]",
        "Failed steps: {steps}.",
        "Files:",
    ),
}


def template_summary(plan: ExecutionPlan) -> str:
    """The offline summary, in the request's language: one paragraph per step, failures named, files listed."""
    lang = "en" if plan["context"].get("lang") == "en" else "zh"
    head, step_head, failed_line, files_head = _WORDS[lang]
    done = sum(s["status"] == "completed" for s in plan["steps"])
    lines = [head.format(done=done, total=len(plan["steps"]))]
    if plan["context"].get("notice"):
        lines.insert(0, str(plan["context"]["notice"]))
    for step in plan["steps"]:
        output = (step["result"]["output"] if step["result"] else "").strip()
        status = _STATUS[lang][step["status"]]
        lines.append(
            "\n" + step_head.format(seq=step["seqNo"], agent=step["agentName"], status=status) + f"\n{output}"
        )
    failed = [s for s in plan["steps"] if s["status"] == "failed"]
    if failed:
        if lang == "en":
            names = ", ".join(f"{s['seqNo']} ({s['agentName']})" for s in failed)
        else:
            names = "、".join(f"{s['seqNo']}（{s['agentName']}）" for s in failed)
        lines.append("\n" + failed_line.format(steps=names))
    standing = standing_line(plan, lang)
    if standing:
        lines.append("\n" + standing)
    files = artifacts_of(plan)
    if files:
        # relative to the data dir, never the server's path (HTTP turns them into /artifacts/ URLs)
        lines.append(f"\n{files_head}\n" + "\n".join(f"- {p}" for p in files))
    return "\n".join(lines)


def standing_line(plan: ExecutionPlan, lang: str) -> str:
    """One line naming the user's long-term facts the steps applied, and where each came from ("" if none)."""
    used: dict[str, dict] = {}
    for step in plan["steps"]:
        context = step["result"]["context"] if step["result"] else {}
        for fact in context.get("facts_used") or []:
            used.setdefault(str(fact.get("fact_id")), fact)
    if not used:
        return ""
    if lang == "en":
        parts = [
            f"{f.get('text')} (from conversation {f.get('conversation_id')}, {i})" for i, f in used.items()
        ]
        return "Used your standing settings: " + "; ".join(parts) + "."
    parts = [f"{f.get('text')}（来自会话 {f.get('conversation_id')}，编号 {i}）" for i, f in used.items()]
    return "使用了您的长期设置：" + "；".join(parts) + "。"


def _model_summary(model: BaseChatModel, plan: ExecutionPlan, fallback: str) -> str:
    """The model's summary when every figure and file in it is a computed one, else `fallback`.

    The model's text is not streamed: it is checked first (tools.model.checks), and a summary the
    results do not support, or a failed model call, leaves the deterministic summary.
    """
    from nodes.model_planner import stream_model

    try:
        reply = stream_model(model, [SystemMessage(content=FINALIZER_PROMPT), HumanMessage(content=fallback)])
    except model_errors() as error:
        log.warning(
            "model summary failed (%s: %s); using the deterministic summary", type(error).__name__, error
        )
        return fallback
    text = reply.text.strip()
    computed = computed_numbers(fallback, [s["result"]["context"] for s in plan["steps"] if s["result"]])
    problems = unsupported_claims(text, computed, artifacts_of(plan)) if text else ["empty"]
    if problems:
        log.warning("model summary not used: unsupported %s; using the deterministic summary", problems[:5])
        return fallback
    notice = str(plan["context"].get("notice") or "")
    standing = standing_line(plan, "en" if plan["context"].get("lang") == "en" else "zh")
    text = f"{text}\n{standing}" if standing else text  # the user is told which standing values were used
    # the user is told how the plan was made, whatever the model wrote
    return f"{notice}\n{text}" if notice and notice not in text else text


def make_finalizer(services: ServicesFactory):  # noqa: ANN201 - a LangGraph node
    """The finalizer node."""

    def finalizer(state: State, runtime: Runtime[Context]) -> dict:
        """Summarise the plan into `summary` and an AI message; save the finished plan."""
        return _finalize(state, runtime, services)

    return finalizer


def _finalize(state: State, runtime: Runtime[Context], services: ServicesFactory) -> dict:
    plan = state.get("plan")
    if plan is None:
        return {}
    svc = services(resolve_context(runtime.context))
    ctx = svc.ctx
    summary = template_summary(plan)
    model = svc.model_for("summary")
    if model is not None:
        summary = _model_summary(model, plan, summary)
    runtime.stream_writer({"index": -1, "content": summary})
    status = "failed" if any(s["status"] == "failed" for s in plan["steps"]) else "completed"
    svc.plans.save(plan, user_id=ctx.user_id, conversation_id=ctx.conversation_id, status=status)
    log.info("plan %s finished: %s", plan["planId"], status)
    return {"summary": summary, "messages": [AIMessage(content=summary)]}
