"""Planner: turns the latest user request into a validated ExecutionPlan.

Offline (default) it routes by similarity to workflow templates and agents; with a model it plans
by calling `list_agents` / `create_plan` (see nodes/model_planner.py). Both paths go through the
same validation, and steps whose results the user already has are dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Literal

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from graphs.context import Context, resolve_context
from graphs.state import State
from nodes.kit.registry import AgentSpec
from nodes.kit.services import RunServices, ServicesFactory
from nodes.routing import Route, best_candidate, drop_reusable_steps
from tools.planning import new_plan, validate_steps

__all__ = [
    "EMPTY_REQUEST",
    "FALLBACK_AGENT",
    "HUGE_REQUEST",
    "candidates",
    "latest_request",
    "make_planner",
    "route_offline",
]

log = logging.getLogger("plangraph.planner")

FALLBACK_AGENT = "knowledge"
EMPTY_REQUEST = "请告诉我您需要做什么，例如：“帮我生成一份光伏经济测算报告”。"
HUGE_REQUEST = "您的输入过长（{n} 字），请精简到 {limit} 字以内，或把资料放进知识库目录后再提问。"


def latest_request(state: State) -> str:
    """Text of the newest human message ('' when there is none)."""
    for msg in reversed(state.get("messages", [])):
        if isinstance(msg, HumanMessage):
            return msg.text.strip() if isinstance(msg.content, (str, list)) else ""
    return ""


def candidates(
    specs: Mapping[str, AgentSpec], templates: Sequence | None = None, extra_dirs: str = ""
) -> list[Route]:
    """Workflow templates (shipped + `extra_dirs`, unless given) then single agents."""
    if templates is None:
        from tools.plans.workflows import load_templates

        templates = load_templates(agents=set(specs), extra=extra_dirs)
    found = [
        Route(t.name, (f"{t.name} {t.description}", *t.examples), tuple(dict(s) for s in t.steps))
        for t in templates
    ]
    found += [
        Route(
            s.name,
            (s.description, *s.examples),
            ({"seqNo": 0, "agentName": s.name, "requirement": "", "dependsOn": []},),
        )
        for s in specs.values()
    ]
    return found


def route_offline(
    query: str, svc: RunServices, specs: Mapping[str, AgentSpec], options: list[Route]
) -> tuple[list[dict], str]:
    """Steps for `query` and a one-line note on how they were chosen."""
    chosen = best_candidate(query, options)
    if chosen is None:
        fallback = FALLBACK_AGENT if FALLBACK_AGENT in specs else next(iter(specs))
        steps = [{"seqNo": 0, "agentName": fallback, "requirement": query, "dependsOn": []}]
        return steps, f"未匹配到工作流，交由 {fallback} 处理"
    steps = [{**s, "requirement": s.get("requirement") or query} for s in chosen.steps]
    steps, dropped = drop_reusable_steps(query, steps, specs, svc.results("planner"))
    note = f"匹配到“{chosen.name}”" + (f"，已有结果、跳过：{'、'.join(dropped)}" if dropped else "")
    return steps, note


def make_planner(  # noqa: ANN201 - a node
    specs: Mapping[str, AgentSpec], services: ServicesFactory, templates: Sequence | None = None
):
    """The planner node for a set of agents (and workflow templates; None = the shipped ones + the run's)."""
    options: dict[str, list[Route]] = {}

    def planner(state: State, runtime: Runtime[Context]) -> Command[Literal["executor", "__end__"]]:
        """Make the plan for the newest request (or answer why it cannot)."""
        svc = services(resolve_context(runtime.context))
        extra = svc.ctx.templates_dirs
        if extra not in options:
            options[extra] = candidates(specs, templates, extra)
        return _plan(state, runtime, svc, specs, options[extra])

    return planner


def _plan(
    state: State,
    runtime: Runtime[Context],
    svc: RunServices,
    specs: Mapping[str, AgentSpec],
    options: list[Route],
) -> Command[Literal["executor", "__end__"]]:
    ctx = svc.ctx
    query = latest_request(state)
    problem = (
        EMPTY_REQUEST
        if not query
        else (
            HUGE_REQUEST.format(n=len(query), limit=ctx.max_request_chars)
            if len(query) > ctx.max_request_chars
            else None
        )
    )
    if problem:
        return Command(goto="__end__", update={"messages": [AIMessage(content=problem)], "summary": problem})
    previous = state.get("plan")
    if previous and any(s["status"] not in ("completed", "failed") for s in previous["steps"]):
        svc.plans.save(
            previous, user_id=ctx.user_id, conversation_id=ctx.conversation_id, status="superseded"
        )
    if ctx.model:
        from nodes.model_planner import PlanningFailedError, plan_with_model

        try:
            steps, note = plan_with_model(query, svc, runtime.stream_writer, specs, state.get("window"))
        except PlanningFailedError as error:
            log.warning("planning failed for %r: %s", query[:80], error)
            text = f"抱歉，这次没能生成可执行的计划：{error}。请换个说法再试一次。"
            return Command(goto="__end__", update={"messages": [AIMessage(content=text)], "summary": text})
    else:
        steps, note = route_offline(query, svc, specs, options)
    plan = new_plan(query, validate_steps(steps, specs))
    log.info(
        "plan %s for %r: %s (%s)", plan["planId"], query[:80], [s["agentName"] for s in plan["steps"]], note
    )
    runtime.stream_writer(
        {"index": -1, "content": f"{note}；计划：" + " → ".join(s["agentName"] for s in plan["steps"])}
    )
    svc.plans.save(plan, user_id=ctx.user_id, conversation_id=ctx.conversation_id, status="running")
    return Command(goto="executor", update={"plan": plan, "summary": ""})
