"""Model-refreshed internal plans (seeds/003, reflection mode).

After a step, a model may rewrite an agent's EP in the seed's output format::

    @epupdatelog@
    {what changed, markdown}
    @epupdatelog@
    @EP@
    *id=1
    *graph=digraph G { 1 [label="…" type="function" toolCode="…" status="待运行"]; … }
    @EP@

`parse_ep_update` reads that text, `apply_ep_update` checks the proposal against the current plan
(completed nodes unchanged, only model-driven status changes, known tools, still a DAG) and
`reflect_ep` runs the loop: ask, check, tell the model exactly what is wrong, retry a bounded number
of times, and keep the old plan when every answer is malformed. Every error is a PlanUpdateError
whose message is written for the model to fix its output.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage

from tools.plans.dot import (
    EP_FIELDS,
    InternalPlan,
    PlanFormatError,
    dot_to_internal_plan,
    internal_plan_to_dot,
)
from tools.plans.status import IllegalTransitionError, StatusLabel, allowed_next, transition

__all__ = [
    "EP_FIX_PROMPT",
    "EP_UPDATE_PROMPT",
    "EPRefresh",
    "ExtraCheck",
    "PlanUpdateError",
    "apply_ep_update",
    "ep_update_request",
    "parse_ep_update",
    "reflect_ep",
    "split_update",
]

log = logging.getLogger("plangraph.plan_reflect")

EP_UPDATE_PROMPT = """请根据最新的对话和工具执行结果，更新下面的内部执行计划（EP）。
当前 EP（*id={ep_id}）：
{graph}
可用工具（toolCode 只能取这些值，multiFunction 节点用逗号分隔多个工具）：{tools}
规则：状态为 完成、运行中、失败 的节点不能修改或删除；你只能把节点状态改为
待运行（输入已齐全）或 待用户输入中（需要先问用户，把问题写进 question），其余状态由框架设置；
节点类型只能是 function、multiFunction、confirm；边 a -> b 表示 b 依赖 a，不能成环。
只输出两部分：
@epupdatelog@
{{更新内容说明}}
@epupdatelog@
@EP@
*id={ep_id}
*graph=digraph G {{ … }}
@EP@"""

EP_FIX_PROMPT = "你输出的 EP 更新无法应用：{error}。请修正后按同样的格式重新输出完整的两部分内容。"

_FROZEN: tuple[StatusLabel, ...] = ("运行中", "完成", "失败")
_NEW_NODE_STATUSES: tuple[StatusLabel, ...] = ("待初始化", *allowed_next("待初始化", "model"))
_FIELDS = {**EP_FIELDS, "extra attributes": "extra"}
_LOG = re.compile(r"@epupdatelog@(.*?)@epupdatelog@", re.S)
_EP = re.compile(r"@EP@(.*?)@EP@", re.S)
_ID = re.compile(r"^\s*\*id\s*=(.*)$", re.M)
_GRAPH = re.compile(r"\*graph\s*=(.*)", re.S)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.M)


# A caller's own rules for an update (e.g. a fixed-sequence agent may not add tool nodes):
# (old, proposed) -> one sentence per problem, written for the model.
ExtraCheck = Callable[[InternalPlan, InternalPlan], Sequence[str]]


class PlanUpdateError(ValueError):
    """A proposed EP update that cannot be applied; the message tells the model what to fix."""


def _one(pattern: re.Pattern[str], text: str, what: str) -> str:
    found = pattern.findall(text)
    if len(found) != 1:
        problem = "is missing" if not found else f"appears {len(found)} times"
        raise PlanUpdateError(f"the {what} block {problem}; write exactly one {what} … {what} block")
    return str(found[0])


def split_update(text: str) -> tuple[str, str, str]:
    """The update note, the `*id=` value ("" when absent) and the `*graph=` DOT text of an answer.

    Shared by both plan levels: an agent's EP (`parse_ep_update`) and the agent-level plan
    (`tools.plans.revise`). Raises PlanUpdateError saying what to fix.
    """
    if not isinstance(text, str):
        raise PlanUpdateError(f"expected the model's text answer, got {type(text).__name__}")
    note = _one(_LOG, text, "@epupdatelog@").strip()
    if not note:
        raise PlanUpdateError("the @epupdatelog@ block is empty; say briefly what you changed and why")
    body = _FENCE.sub("", _one(_EP, text, "@EP@"))
    ids = _ID.findall(body)
    if len(ids) > 1:
        raise PlanUpdateError("*id= appears more than once in the @EP@ block; write it once")
    graph = _GRAPH.search(body)
    if graph is None:
        raise PlanUpdateError("the @EP@ block has no *graph=digraph G {…} line; add it after *id=")
    return note, ids[0].strip() if ids else "", graph.group(1).strip()


def parse_ep_update(text: str) -> tuple[str, str, InternalPlan]:
    """The update note, the EP id ("" for a new EP) and the proposed plan from a model's answer."""
    note, ep_id, graph = split_update(text)
    try:
        plan = dot_to_internal_plan(graph)
    except PlanFormatError as err:
        raise PlanUpdateError(f"*graph is not a valid EP: {err}") from None
    if plan.id and ep_id and plan.id != ep_id:
        raise PlanUpdateError(f"*id={ep_id} but the graph says epId={plan.id}; use one id")
    ep_id = ep_id or plan.id
    return note, ep_id, InternalPlan(id=ep_id, nodes=plan.nodes, edges=plan.edges)


def _changes(old: InternalPlan, new: InternalPlan, known_tools: Collection[str]) -> list[str]:
    """Everything wrong with replacing `old` by `new`, one sentence each."""
    problems = []
    if old.id and new.id and old.id != new.id:
        problems.append(f"you wrote *id={new.id} but the current EP is {old.id}; write *id={old.id}")
    for before in old.nodes:
        after = new.node(before.id)
        if after is None:
            if before.status in _FROZEN:
                problems.append(
                    f"node {before.id} is {before.status} and cannot be removed; keep it unchanged"
                )
            continue
        if before.status in _FROZEN:
            changed = [
                name for name, attr in _FIELDS.items() if getattr(before, attr) != getattr(after, attr)
            ]
            if old.depends_on(before.id) != new.depends_on(before.id):
                changed.append("incoming edges")
            if changed:
                problems.append(
                    f"node {before.id} was {before.status} and cannot change its {', '.join(changed)}; "
                    "copy it exactly as it was"
                )
            continue
        try:
            transition(before.status, after.status, "model")
        except IllegalTransitionError as err:
            problems.append(f"node {before.id}: {err}")
    for node in new.nodes:
        if old.node(node.id) is None and node.status not in _NEW_NODE_STATUSES:
            problems.append(
                f"new node {node.id} must start as one of {', '.join(_NEW_NODE_STATUSES)}, not {node.status}"
            )
        frozen = (old.node(node.id) or node).status in _FROZEN
        unknown = [t for t in node.tools() if t not in known_tools]
        if unknown and not frozen:
            problems.append(
                f"node {node.id}: unknown tool(s) {', '.join(unknown)}; available: {', '.join(sorted(known_tools))}"
            )
        if node.type == "function" and len(node.tools()) > 1:
            problems.append(
                f'node {node.id}: a function node calls one tool; use type="multiFunction" for several'
            )
    return problems


def apply_ep_update(
    old: InternalPlan,
    new: InternalPlan,
    known_tools: Collection[str],
    extra_check: ExtraCheck | None = None,
) -> InternalPlan:
    """`new` checked against `old` (keeps old's id when new has none); all problems in one error.

    `extra_check(old, new)` adds the caller's own rules to the general ones.
    """
    try:
        checked = dot_to_internal_plan(internal_plan_to_dot(new), plan_id=new.id or old.id)
    except PlanFormatError as err:
        raise PlanUpdateError(f"the new EP is not valid: {err}") from None
    problems = _changes(old, checked, known_tools)
    if extra_check is not None:
        problems += extra_check(old, checked)
    if problems:
        raise PlanUpdateError("; ".join(problems))
    return checked


def ep_update_request(plan: InternalPlan, known_tools: Collection[str]) -> str:
    """The instruction asking a model to refresh `plan` (EP_UPDATE_PROMPT filled in)."""
    return EP_UPDATE_PROMPT.format(
        ep_id=plan.id, graph=internal_plan_to_dot(plan).strip(), tools=", ".join(sorted(known_tools))
    )


@dataclass(frozen=True)
class EPRefresh:
    """Outcome of `reflect_ep`: the plan to use, the model's note, and each rejected attempt."""

    plan: InternalPlan
    note: str
    updated: bool
    errors: tuple[str, ...] = field(default=())


def reflect_ep(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    old: InternalPlan,
    known_tools: Collection[str],
    max_attempts: int = 3,
    extra_check: ExtraCheck | None = None,
) -> EPRefresh:
    """Ask `model` for an EP update; on a malformed answer, say what is wrong and retry.

    `messages` end with the request (e.g. `HumanMessage(ep_update_request(old, tools))`). After
    `max_attempts` rejected answers the old plan is kept and the errors are returned.
    `extra_check` adds the caller's rules (see `apply_ep_update`).
    """
    conversation, errors = list(messages), []
    for _ in range(max_attempts):
        reply = model.invoke(conversation)
        try:
            note, _, proposed = parse_ep_update(reply.text)
            plan = apply_ep_update(old, proposed, known_tools, extra_check)
        except PlanUpdateError as err:
            errors.append(str(err))
            conversation += [reply, HumanMessage(EP_FIX_PROMPT.format(error=err))]
            continue
        log.info("EP %s updated: %s", plan.id or "(new)", note)
        return EPRefresh(plan=plan, note=note, updated=True, errors=tuple(errors))
    log.warning(
        "EP %s kept: %d rejected updates; last: %s", old.id, len(errors), errors[-1] if errors else ""
    )
    return EPRefresh(plan=old, note="", updated=False, errors=tuple(errors))
