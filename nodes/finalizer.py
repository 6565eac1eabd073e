"""Finalizer: summarises every step (failures named), persists the finished plan."""

from __future__ import annotations

import logging

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.kit.services import ServicesFactory
from tools.contracts import ExecutionPlan, artifacts_of

__all__ = ["FINALIZER_PROMPT", "make_finalizer", "template_summary"]

log = logging.getLogger("plangraph.finalizer")

FINALIZER_PROMPT = """你是总结器。根据各步骤的执行结果，用中文给用户写一段简洁的总结：
先给结论（关键数字），再列出每个步骤的结果；失败的步骤要点名并说明原因；列出生成的文件路径。
只使用给出的结果，不要编造数字。"""
_STATUS = {
    "completed": "完成",
    "failed": "失败",
    "interrupted": "待用户输入",
    "not_started": "未执行",
    "in_progress": "运行中",
}


def template_summary(plan: ExecutionPlan) -> str:
    """The offline summary: one paragraph per step, failures named, files listed."""
    done = sum(s["status"] == "completed" for s in plan["steps"])
    lines = [f"计划执行结束：{done}/{len(plan['steps'])} 个步骤完成。"]
    for step in plan["steps"]:
        output = (step["result"]["output"] if step["result"] else "").strip()
        lines.append(
            f"\n【步骤 {step['seqNo']} · {step['agentName']} · {_STATUS[step['status']]}】\n{output}"
        )
    failed = [f"{s['seqNo']}（{s['agentName']}）" for s in plan["steps"] if s["status"] == "failed"]
    if failed:
        lines.append(f"\n失败的步骤：{'、'.join(failed)}。")
    files = artifacts_of(plan)
    if files:
        lines.append("\n生成的文件：\n" + "\n".join(f"- {p}" for p in files))
    return "\n".join(lines)


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
    model = svc.model
    if model is not None:
        from nodes.model_planner import stream_model

        reply = stream_model(
            model,
            [SystemMessage(content=FINALIZER_PROMPT), HumanMessage(content=summary)],
            lambda text: runtime.stream_writer({"index": -1, "content": text}),
        )
        summary = reply.text or summary
    else:
        runtime.stream_writer({"index": -1, "content": summary})
    status = "failed" if any(s["status"] == "failed" for s in plan["steps"]) else "completed"
    svc.plans.save(plan, user_id=ctx.user_id, conversation_id=ctx.conversation_id, status=status)
    log.info("plan %s finished: %s", plan["planId"], status)
    return {"summary": summary, "messages": [AIMessage(content=summary)]}
