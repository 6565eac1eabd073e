"""Model revisions of the agent-level plan (seeds/003 `@EP@` / `@epupdatelog@`, at the top level).

After a step completes, a model may rewrite the plan's remaining steps in the seed's format::

    @epupdatelog@
    已有测算结果，不再需要敏感性分析。
    @epupdatelog@
    @EP@
    *id=plan_1
    *graph=digraph G { 0 [label="…" type="agent" agentName="pv_calc" status="完成"]; … }
    @EP@

`parse_plan_update` reads that answer against the current plan and returns the checked
`PlanRevision` or a PlanUpdateError whose message tells the model what to fix. The rules:

- a step that has started (运行中, 待用户输入中, 完成, 失败) stays exactly as it is: same agent,
  requirement and dependencies; it cannot be dropped (its result is always the plan's own, never
  the model's text);
- steps not started may be dropped, rewired (`dependsOn`, i.e. reordered) or rewritten; new steps
  take step numbers never used in this plan; only the framework sets statuses, so every step the
  model writes is 待初始化 or 待运行;
- the whole plan then passes `tools.planning.validate_steps`, the planner's own validator (known
  agents, known dependencies, no cycle, step and text bounds).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tools.contracts import ExecutionPlan, PlanStep
from tools.planning import PlanValidationError, validate_steps
from tools.plans.dot import PlanFormatError, dot_to_plan, plan_to_dot
from tools.plans.reflect import PlanUpdateError, split_update

__all__ = [
    "REVISE_FIX_PROMPT",
    "REVISE_FIX_PROMPT_EN",
    "REVISE_PROMPT",
    "REVISE_PROMPT_EN",
    "PlanRevision",
    "parse_plan_update",
    "prompt_dot",
    "retired_steps",
    "revision_request",
    "to_review",
]

REVISE_PROMPT = """你是多智能体系统的计划调整者。每完成一个步骤，你判断剩余的计划（AEP）是否需要调整：
新增步骤、删除不再需要的步骤，或通过 dependsOn 调整顺序。
规则：状态为 完成、运行中、待用户输入中、失败 的节点必须原样保留（label、agentName、边都不能改，也不能删除）；
你写的其余节点状态只能是 待初始化 或 待运行，状态由框架设置；新增节点用从未用过的编号；
agentName 只能取给出的智能体；边 a -> b 表示 b 依赖 a，不能成环；toolOutput 一律写 ""。
不需要调整时，原样输出当前计划，并在 @epupdatelog@ 里写“无需调整”。
只输出两部分：
@epupdatelog@
{更新内容说明：调整了什么，为什么}
@epupdatelog@
@EP@
*id=<planId>
*graph=digraph G { … }
@EP@"""

REVISE_FIX_PROMPT = "你输出的计划调整无法应用：{error}。请修正后按同样的格式重新输出完整的两部分内容。"
REVISE_PROMPT_EN = """You revise the plan of a multi-agent system. After each completed step, decide whether the
remaining plan (AEP) should change: add steps, drop steps no longer needed, or reorder them through dependsOn.
Rules: nodes with status 完成 (done), 运行中 (running), 待用户输入中 (waiting for the user) or 失败 (failed)
must stay exactly as they are (same label, agentName and edges; never removed);
every other node you write has status 待初始化 or 待运行 (the framework sets statuses); a new node takes a
number never used before; agentName must be one of the given agents; an edge a -> b means b depends on a,
no cycles; write toolOutput as "". Write labels in the user's language.
If nothing needs to change, output the current plan unchanged and write "no change" in @epupdatelog@.
Output exactly two parts:
@epupdatelog@
{what you changed and why}
@epupdatelog@
@EP@
*id=<planId>
*graph=digraph G { … }
@EP@"""
REVISE_FIX_PROMPT_EN = (
    "Your plan revision cannot be applied: {error}. Fix it and output both parts again, in the same format."
)

_NOT_STARTED = "not_started"


@dataclass(frozen=True)
class PlanRevision:
    """A checked revision: the full new step list and what changed, by step number."""

    note: str
    steps: tuple[PlanStep, ...]
    added: tuple[int, ...] = ()
    dropped: tuple[int, ...] = ()
    rewired: tuple[int, ...] = ()
    rewritten: tuple[int, ...] = ()

    @property
    def changed(self) -> bool:
        """True when the revision adds, drops, reorders or rewrites a step."""
        return bool(self.added or self.dropped or self.rewired or self.rewritten)


def to_review(plan: ExecutionPlan, bound: int) -> list[int]:
    """Completed steps no revision has looked at yet, while fewer than `bound` revisions were applied.

    Empty once `bound` revisions changed the plan: no more model calls for it.
    """
    log = [e for e in plan["context"].get("revisions", []) if isinstance(e, Mapping)]
    if sum(e.get("status") == "applied" for e in log) >= bound:
        return []
    seen = {int(n) for e in log for n in e.get("after", [])}
    return [s["seqNo"] for s in plan["steps"] if s["status"] == "completed" and s["seqNo"] not in seen]


def retired_steps(plan: ExecutionPlan) -> set[int]:
    """Step numbers an earlier revision dropped (a new step may not take one of them)."""
    log = plan["context"].get("revisions", [])
    return {int(n) for entry in log if isinstance(entry, Mapping) for n in entry.get("dropped", [])}


def prompt_dot(plan: ExecutionPlan) -> str:
    """The plan as the model sees it: DOT without results or context (outputs are given apart)."""
    bare = [PlanStep(**{**s, "result": None}) for s in plan["steps"]]
    return plan_to_dot(
        ExecutionPlan(planId=plan["planId"], userQuery=plan["userQuery"], steps=bare, context={})
    )


def revision_request(
    plan: ExecutionPlan, after: Sequence[int], agents: Iterable[Mapping[str, Any]], lang: str = "zh"
) -> str:
    """The user message of a revision call: what just finished, what the agents do, the plan.

    `lang` ("zh" or "en") is the language of its headings (the request's; the DOT stays as it is).
    """
    en = lang == "en"
    by_seq = {s["seqNo"]: s for s in plan["steps"]}
    done = []
    for seq in after:
        step = by_seq[seq]
        output = " ".join(str(step["result"]["output"] if step["result"] else "").split())[:300]
        agent = step["agentName"]
        done.append(
            f"- step {seq} ({agent}) completed: {output}" if en else f"- 步骤 {seq}（{agent}）完成：{output}"
        )
    sep = ": " if en else "："
    agent_lines = [
        f"- {a['name']}{sep}{' '.join(str(a.get('description', '')).split())[:160]}" for a in agents
    ]
    heads = (
        ("The user's request: ", "Steps just completed:", "Available agents:", "Current plan (*id={}):")
        if en
        else ("用户的需求：", "刚完成的步骤：", "可用的智能体：", "当前计划（*id={}）：")
    )
    return "\n".join(
        [
            f"{heads[0]}{plan['userQuery']}",
            heads[1],
            *done,
            heads[2],
            *agent_lines,
            heads[3].format(plan["planId"]),
            prompt_dot(plan).strip(),
        ]
    )


def _frozen_problems(before: PlanStep, after: PlanStep | None) -> list[str]:
    seq = before["seqNo"]
    if after is None:
        return [f"node {seq} has started ({before['status']}) and cannot be removed; keep it unchanged"]
    changed = [
        name
        for name, key in (
            ("agentName", "agentName"),
            ("label", "requirement"),
            ("incoming edges", "dependsOn"),
        )
        if before[key] != after[key]  # type: ignore[literal-required]
    ]
    if after["status"] != before["status"]:
        changed.append("status")
    if changed:
        return [
            f"node {seq} has started and cannot change its {', '.join(changed)}; copy it exactly as it was"
        ]
    return []


def parse_plan_update(
    text: str, plan: ExecutionPlan, agents: Collection[str], retired: Collection[int] = ()
) -> PlanRevision:
    """The revision a model's answer proposes for `plan`, checked; PlanUpdateError lists every problem.

    `agents` are the valid agent names; `retired` the step numbers earlier revisions dropped.
    """
    note, plan_id, graph = split_update(text)
    try:
        proposed = dot_to_plan(graph)
    except PlanFormatError as err:
        raise PlanUpdateError(f"*graph is not a valid agent-level plan: {err}") from None
    problems = []
    graph_id = proposed["planId"]
    for given in {plan_id, graph_id} - {""}:
        if given != plan["planId"]:
            problems.append(
                f"you wrote id {given} but the plan is {plan['planId']}; write *id={plan['planId']}"
            )
    current = {s["seqNo"]: s for s in plan["steps"]}
    new = {s["seqNo"]: s for s in proposed["steps"]}
    for seq, before in current.items():
        if before["status"] != _NOT_STARTED:
            problems += _frozen_problems(before, new.get(seq))
    for seq, proposal in new.items():
        if seq in retired and seq not in current:
            problems.append(
                f"node {seq}: step number {seq} was dropped earlier; give the new step an unused number"
            )
        has_started = seq in current and current[seq]["status"] != _NOT_STARTED
        if not has_started and proposal["status"] != _NOT_STARTED:
            problems.append(f"node {seq}: only the framework sets a step's status; write 待初始化 or 待运行")
    if problems:
        raise PlanUpdateError("; ".join(problems))
    started = {seq: s for seq, s in current.items() if s["status"] != _NOT_STARTED}
    waiting = {seq: s for seq, s in current.items() if s["status"] == _NOT_STARTED}
    try:  # the planner's validator, over the whole plan (started steps as they are)
        checked = {
            s["seqNo"]: s for s in validate_steps([started.get(seq, s) for seq, s in new.items()], agents)
        }
    except PlanValidationError as err:
        raise PlanUpdateError(str(err)) from None
    kept = [seq for seq in waiting if seq in checked]
    return PlanRevision(
        note=note,
        steps=tuple(started.get(seq, checked[seq]) for seq in sorted(checked)),
        added=tuple(sorted(set(checked) - set(current))),
        dropped=tuple(sorted(set(waiting) - set(checked))),
        rewired=tuple(seq for seq in kept if checked[seq]["dependsOn"] != waiting[seq]["dependsOn"]),
        rewritten=tuple(
            seq
            for seq in kept
            if (checked[seq]["agentName"], checked[seq]["requirement"])
            != (waiting[seq]["agentName"], waiting[seq]["requirement"])
        ),
    )
