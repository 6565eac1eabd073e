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
from memory.facts import Fact
from nodes.kit.registry import AgentSpec
from nodes.kit.services import RunServices, ServicesFactory
from nodes.routing import Route, RouteIndex
from nodes.standing import acknowledge, leftover, refusal, refused
from nodes.understand import Understanding, language, understand, value_words
from tools.lang import has_language
from tools.planning import MAX_REQUIREMENT_CHARS, new_plan, validate_steps
from tools.segment import declared_terms

__all__ = [
    "EMPTY_REQUEST",
    "HUGE_REQUEST",
    "candidates",
    "latest_request",
    "make_planner",
    "route_offline",
]

log = logging.getLogger("plangraph.planner")

EMPTY_REQUEST = "请告诉我您需要做什么，例如：“帮我生成一份光伏经济测算报告”。"
MODEL_FAILED = "模型这次没能生成可执行的计划（{error}），已改用离线规划。"
MODEL_FAILED_EN = "The model could not make a valid plan this time ({error}); planned offline instead."
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
    """Workflow templates (shipped + `extra_dirs`, unless given) then single agents (with their vocabulary).

    A template's name is a text of its own ("光伏测算报告"): a request that names the workflow asks for it.
    """
    if templates is None:
        from tools.plans.workflows import load_templates

        templates = load_templates(agents=set(specs), extra=extra_dirs)
    found = [
        Route(t.name, (t.name, t.description, *t.examples), tuple(dict(s) for s in t.steps))
        for t in templates
    ]
    found += [
        Route(
            s.name,
            (s.title, s.description, *s.examples, *(s.vocabulary() if s.vocabulary else ())),
            ({"seqNo": 0, "agentName": s.name, "requirement": "", "dependsOn": []},),
        )
        for s in specs.values()
        if s.offline
    ]
    return found


def route_index(
    specs: Mapping[str, AgentSpec], templates: Sequence | None = None, extra_dirs: str = ""
) -> RouteIndex:
    """The routing index over `candidates`, with the agents' value words left out of matching.

    Texts are segmented with the terms the agents declare: the items of their vocabulary's lists
    (the knowledge base's tags) and the choices of their inputs ("工商业", "户用").
    """
    declared = [text for s in specs.values() if s.offline and s.vocabulary for text in s.vocabulary()]
    declared += [c for s in specs.values() for f in (*s.inputs, *s.answer_fields) for c in f.choices]
    return RouteIndex(
        candidates(specs, templates, extra_dirs), is_value=value_words(specs), terms=declared_terms(declared)
    )


def route_offline(
    query: str, svc: RunServices, specs: Mapping[str, AgentSpec], index: RouteIndex, lang: str = ""
) -> Understanding:
    """What `query` asks for (nodes.understand), each step's requirement set to the request.

    Agents with `offline=False` (model-only, e.g. the general assistant) are not considered.
    """
    specs = {name: spec for name, spec in specs.items() if spec.offline}
    found = understand(query, specs, index, svc.results("planner"), lang)
    if not found.matched:
        # no agent matched by words: one may still serve it from its data (e.g. a knowledge base
        # passage close in meaning, or the user's own documents)
        for spec in specs.values():
            if spec.serves is not None and spec.serves(svc, query):
                step = {"seqNo": 0, "agentName": spec.name, "requirement": query, "dependsOn": []}
                return Understanding(found.lang, [step], note=f"served by {spec.name} from the user's data")
    rival = specs.get(found.alternative)
    if rival is not None and rival.serves is not None and rival.serves(svc, query):
        found.steps = [{"seqNo": 0, "agentName": rival.name, "requirement": query, "dependsOn": []}]
        found.note = f"{found.note}; {rival.name} answers it from its documents"
    found.steps = [{**s, "requirement": s.get("requirement") or query} for s in found.steps]
    return found


def _stated_facts(state: State, svc: RunServices) -> list[Fact]:
    """The user's long-term facts that the newest request stated (written by remember_request)."""
    request = next((m for m in reversed(state.get("messages", [])) if isinstance(m, HumanMessage)), None)
    if request is None or not request.id:
        return []
    return [f for f in svc.memory.facts.for_user(svc.ctx.user_id) if f.message_id == str(request.id)]


def make_planner(  # noqa: ANN201 - a node
    specs: Mapping[str, AgentSpec], services: ServicesFactory, templates: Sequence | None = None
):
    """The planner node for a set of agents (and workflow templates; None = the shipped ones + the run's)."""
    options: dict[str, RouteIndex] = {}

    def planner(state: State, runtime: Runtime[Context]) -> Command[Literal["executor", "__end__"]]:
        """Make the plan for the newest request (or answer why it cannot)."""
        svc = services(resolve_context(runtime.context))
        extra = svc.ctx.templates_dirs
        if extra not in options:
            options[extra] = route_index(specs, templates, extra)
        return _plan(state, runtime, svc, specs, options[extra])

    return planner


def _plan(
    state: State,
    runtime: Runtime[Context],
    svc: RunServices,
    specs: Mapping[str, AgentSpec],
    index: RouteIndex,
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
    wrong = refused(query, specs, index)
    # a request that only states a standing value that cannot be ("以后电价都按-1元/度算"): named back,
    # nothing kept; beside other work the value stays in the request, and the step that reads it asks
    if wrong and not leftover(query, [st.said for st in wrong]):
        text = refusal(wrong, language(query))
        runtime.stream_writer({"index": -1, "content": text})
        return Command(goto="__end__", update={"messages": [AIMessage(content=text)], "summary": text})
    stated = _stated_facts(state, svc)
    routed = query
    if stated:  # the request stated long-term facts (nodes.standing): kept already, the rest is planned
        routed = leftover(query, [f.said for f in stated])
        if not routed:
            text = acknowledge(stated, language(query))
            runtime.stream_writer({"index": -1, "content": text})
            return Command(goto="__end__", update={"messages": [AIMessage(content=text)], "summary": text})
        kept = "; ".join(f"{f.text} ({f.fact_id})" for f in stated)
        noted = f"Noted: {kept}" if language(query) == "en" else f"已记住：{kept}"
        runtime.stream_writer({"index": -1, "content": noted})
    previous = state.get("plan")
    # a request without words of its own ("1.5 MW?", "0.65") is answered in the conversation's language
    spoken = (
        language(query) if has_language(query) or not previous else str(previous["context"].get("lang", ""))
    )
    if previous and any(s["status"] not in ("completed", "failed") for s in previous["steps"]):
        svc.plans.save(
            previous, user_id=ctx.user_id, conversation_id=ctx.conversation_id, status="superseded"
        )
    notice = ""
    found: Understanding | None = None
    if ctx.model:
        from nodes.model_planner import PlanningFailedError, plan_with_model

        try:
            steps, note = plan_with_model(routed, svc, specs, state.get("window"))
            lang = spoken or language(query)
        except PlanningFailedError as error:  # the offline planner plans the request, and the user is told
            log.warning("model planning failed for %r: %s; planning offline", query[:80], error)
            found = route_offline(routed, svc, specs, index, spoken)
            notice = (MODEL_FAILED_EN if found.lang == "en" else MODEL_FAILED).format(error=error)
    else:
        found = route_offline(routed, svc, specs, index, spoken)
    if found is not None:
        if not found.steps:
            log.info("no plan for %r: %s", query[:80], found.note)
            text = f"{notice}\n{found.reply}".strip()
            runtime.stream_writer({"index": -1, "content": text})  # streaming clients see the answer too
            return Command(goto="__end__", update={"messages": [AIMessage(content=text)], "summary": text})
        steps, note, lang = found.steps, found.note, found.lang
        # A step's requirement is the request (up to max_request_chars) or a part of it; the bound is
        # the model's, and the whole request stays in the plan's userQuery.
        steps = [{**s, "requirement": s["requirement"][:MAX_REQUIREMENT_CHARS]} for s in steps]
    plan = new_plan(query, validate_steps(steps, specs))
    plan["context"]["lang"] = lang
    if found is None:  # the model wrote the requirements: they carry no user parameters (StepContext.texts)
        plan["context"]["requirements_by"] = "model"
    if notice:
        plan["context"]["notice"] = notice
        runtime.stream_writer({"index": -1, "content": notice})
    log.info(
        "plan %s for %r: %s (%s)", plan["planId"], query[:80], [s["agentName"] for s in plan["steps"]], note
    )
    chain = " → ".join(s["agentName"] for s in plan["steps"])
    runtime.stream_writer({"index": -1, "content": f"Plan: {chain}" if lang == "en" else f"计划：{chain}"})
    svc.plans.save(plan, user_id=ctx.user_id, conversation_id=ctx.conversation_id, status="running")
    return Command(goto="executor", update={"plan": plan, "summary": ""})
