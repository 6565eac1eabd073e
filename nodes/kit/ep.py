"""A sub-agent's internal plan (EP) for one step, with live statuses and reflection.

Each agent may name a DOT file (`AgentSpec.internal_plan`, see `nodes.kit.ep_plans`):
its fixed sequence of `function` / `multiFunction` nodes (`toolCode` = tools the agent records)
and a `confirm` node where it may ask the user. `EPTracker` follows one step through the status
machine of `tools.plans.status`, driven by what the agent does through its StepContext:

- step starts: nodes whose dependencies are done → 待运行; a ready confirm node → 运行中 (the
  agent is checking its inputs); on a resumed step the waiting confirm node → 待运行 with the
  user's answer, then 运行中;
- `record_tool_call(tool)`: its node → 运行中 → 完成 (toolInput/toolOutput shortened); confirm
  nodes before it → 完成 (the check passed); a multiFunction node completes once all its tools ran;
- `interrupted(question)`: the open confirm node → 待用户输入中 with the question;
- the step completes: confirm nodes still open → 完成; it fails: 运行中 → 失败, and nodes
  waiting on a failed node → 失败 (skipped).

A workflow agent's own code takes the decisions the seed gives to the model (its inputs are
complete → 待运行; an input is missing → 待用户输入中); the framework drives the rest.

Reflection (a model configured): after each recorded tool call the model may refresh the EP
(`tools.plans.reflect.reflect_ep`). These agents run a fixed sequence, so `fixed_sequence_problems`
lets an update add, change or remove confirm nodes and edit labels, but not add, remove or
re-tool function nodes. Its one effect on execution: a node left in 待用户输入中 turns the
step's completed result into a question (the step re-runs once the user answers).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from nodes.kit.ep_plans import internal_plan_of
from tools.plans.dot import InternalNode, InternalPlan, PlanFormatError, dot_to_internal_plan
from tools.plans.reflect import ep_update_request, reflect_ep
from tools.plans.status import Actor, StatusLabel, transition

if TYPE_CHECKING:
    from nodes.kit.registry import AgentSpec
    from tools.contracts import AgentExecResult

__all__ = ["EP_REFLECT_PROMPT", "EPTracker", "fixed_sequence_problems", "start_ep"]

log = logging.getLogger("plangraph.ep")

SHORT = 160  # characters of a tool's input/output kept on its node
EP_REFLECT_PROMPT = """你是「{agent}」智能体的执行计划（EP）维护者。每个工具执行结束后，你判断剩余的 EP 是否需要更新。
这个智能体按固定顺序执行工具：不能新增、删除工具节点，也不能改它们的 toolCode。
如果结果可疑或需要用户拍板（例如参数明显异常、收益为负），新增一个 type="confirm" 的节点，
status 设为 待用户输入中，把要问用户的问题写进 question，并加一条从最后完成的节点指向它的边。
不需要更新时，原样输出当前 EP，并在 @epupdatelog@ 里写“无需更新”。"""

_AGENT: Actor = "model"  # a workflow agent's own code takes the model's decisions (see module doc)
_OPEN: tuple[StatusLabel, ...] = ("待初始化", "待运行", "运行中")
_TOOL_TYPES = ("function", "multiFunction")


def fixed_sequence_problems(old: InternalPlan, new: InternalPlan) -> list[str]:
    """What a reflected update may not do to a fixed-sequence agent's EP, one sentence each."""
    problems = []
    for node in new.nodes:
        before = old.node(node.id)
        if before is None and node.type != "confirm":
            problems.append(
                f"node {node.id}: this agent runs a fixed sequence of tools and cannot add tool nodes; "
                'to ask the user, add a type="confirm" node'
            )
        elif before is not None and before.type in _TOOL_TYPES and before.status in _OPEN:
            if (node.type, node.tools()) != (before.type, before.tools()):
                problems.append(
                    f"node {node.id}: keep its type and toolCode; this agent always runs that tool"
                )
            if node.status == "待用户输入中":
                problems.append(
                    f'node {node.id}: only confirm nodes ask the user; add a type="confirm" node with the question'
                )
        if node.status == "待用户输入中" and not node.question.strip():
            problems.append(
                f'node {node.id} waits for the user but has no question; write it in question="…"'
            )
    problems += [
        f"node {node.id} ({node.tool_code}) cannot be removed: this agent always runs it; keep it"
        for node in old.nodes
        if node.type in _TOOL_TYPES and new.node(node.id) is None and node.status in _OPEN
    ]
    return problems


def _short(text: str) -> str:
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


class EPTracker:
    """One step's internal plan with live node statuses (see the module docstring)."""

    def __init__(self, plan: InternalPlan, tools: Collection[str], agent: str) -> None:
        self.plan = plan
        self.tools = tuple(tools)
        self.agent = agent
        self._ran: dict[str, set[str]] = {}  # multiFunction node id -> tools recorded so far

    @classmethod
    def start(
        cls,
        template: InternalPlan,
        *,
        ep_id: str,
        tools: Collection[str],
        agent: str,
        previous: str | None = None,
        answer: str = "",
    ) -> EPTracker:
        """The EP of a step starting now; `previous` is the EP DOT of its interrupted attempt."""
        plan = replace(template, id=ep_id)
        if previous:
            try:
                plan = dot_to_internal_plan(previous, plan_id=ep_id)
            except PlanFormatError as err:  # written by us; a bad one is a bug, but not worth the step
                log.warning(
                    "EP %s: previous attempt's plan unreadable (%s); starting from the template", ep_id, err
                )
        tracker = cls(plan, tools, agent)
        for node in plan.nodes:
            if node.status == "待用户输入中":  # the user's answer arrived
                tracker._move(node.id, "待运行", "framework", answer=answer)
        tracker._advance()
        return tracker

    def dot(self) -> str:
        """The EP as DOT text (what the step's result keeps under `context["ep"]`)."""
        from tools.plans.dot import internal_plan_to_dot

        return internal_plan_to_dot(self.plan)

    def waiting(self) -> InternalNode | None:
        """The first node waiting for the user, if any."""
        return next((n for n in self.plan.nodes if n.status == "待用户输入中"), None)

    def tool_recorded(self, tool: str, args: Mapping[str, Any], output: str) -> None:
        """The agent ran `tool`: its node completes (a multiFunction node once all its tools ran)."""
        tool_input = _short(json.dumps(args, ensure_ascii=False, default=str, sort_keys=True))
        node = next((n for n in self.plan.nodes if tool in n.tools() and n.status in _OPEN), None)
        if node is None:
            done = next((n for n in self.plan.nodes if tool in n.tools() and n.status == "完成"), None)
            if done is not None:  # a resumed step re-runs its fixed sequence; 完成 has no way out
                self._set(done.id, tool_input=tool_input, tool_output=_short(output))
            else:
                log.warning(
                    "EP %s: %s ran tool %r, which no open node of its plan names",
                    self.plan.id,
                    self.agent,
                    tool,
                )
            return
        for dep in self.plan.depends_on(node.id):
            before = self.plan.node(dep)
            if before is not None and before.type == "confirm" and before.status in ("待运行", "运行中"):
                self._complete(dep)
            elif before is not None and before.status != "完成":
                log.warning("EP %s: tool %r ran before node %s (%s)", self.plan.id, tool, dep, before.status)
        if node.status == "待初始化":
            self._move(node.id, "待运行", _AGENT)
        self._move(node.id, "运行中", "framework")
        ran = self._ran.setdefault(node.id, set()) | {tool}
        self._ran[node.id] = ran
        if node.type == "multiFunction":
            tool_input = _short(f"{node.tool_input}\n{tool}: {tool_input}".strip())
            output = f"{node.tool_output}\n{tool}: {output}".strip()
        self._set(node.id, tool_input=tool_input, tool_output=_short(output))
        if set(node.tools()) <= ran:
            self._move(node.id, "完成", "framework")
        self._advance()

    def ask(self, question: str) -> None:
        """The agent interrupted: its open confirm node waits for the user's answer to `question`."""
        open_confirms = [n for n in self.plan.nodes if n.type == "confirm" and n.status in _OPEN]
        node = next(
            (n for n in open_confirms if n.status == "运行中"), open_confirms[0] if open_confirms else None
        )
        if node is None:
            log.warning(
                "EP %s: %s asked the user, but its plan has no open confirm node", self.plan.id, self.agent
            )
            return
        self._move(node.id, "待用户输入中", _AGENT, question=question)

    def finish(self) -> None:
        """The step completed: confirm nodes still open whose dependencies are done pass (完成)."""
        self._advance()
        changed = True
        while changed:
            changed = False
            for node in self.plan.nodes:
                if node.type == "confirm" and node.status in ("待运行", "运行中") and self._ready(node.id):
                    self._complete(node.id)
                    self._advance()
                    changed = True

    def fail(self) -> None:
        """The step failed: running nodes 失败, nodes waiting on a failed node 失败 (skipped)."""
        for node in self.plan.nodes:
            if node.status == "运行中":
                self._move(node.id, "失败", "framework")
        changed = True
        while changed:
            changed = False
            for node in self.plan.nodes:
                deps = [self.plan.node(d) for d in self.plan.depends_on(node.id)]
                if node.status == "待初始化" and any(d is not None and d.status == "失败" for d in deps):
                    self._move(node.id, "失败", "framework")
                    changed = True

    def reflect(self, model: BaseChatModel, facts: str, max_attempts: int = 3) -> str | None:
        """Let `model` refresh the remaining EP; the update note when the plan changed, else None."""
        messages = [
            SystemMessage(content=EP_REFLECT_PROMPT.format(agent=self.agent)),
            HumanMessage(content=f"{facts}\n\n{ep_update_request(self.plan, self.tools)}"),
        ]
        refresh = reflect_ep(
            model,
            messages,
            self.plan,
            self.tools,
            max_attempts=max_attempts,
            extra_check=fixed_sequence_problems,
        )
        if not refresh.updated or refresh.plan == self.plan:
            return None
        self.plan = refresh.plan
        log.info("EP %s (%s) refreshed by the model: %s", self.plan.id, self.agent, refresh.note)
        return refresh.note

    # --- status changes, each checked against the transition table ------------------------------

    def _ready(self, node_id: str) -> bool:
        return all(
            (d := self.plan.node(dep)) is not None and d.status == "完成"
            for dep in self.plan.depends_on(node_id)
        )

    def _advance(self) -> None:
        """Nodes whose dependencies are done become 待运行; a ready confirm node starts (运行中)."""
        for node in self.plan.nodes:
            if node.status == "待初始化" and self._ready(node.id):
                self._move(node.id, "待运行", _AGENT)
            current = self.plan.node(node.id)
            if current is not None and current.type == "confirm" and current.status == "待运行":
                self._move(node.id, "运行中", "framework")

    def _complete(self, node_id: str) -> None:
        node = self.plan.node(node_id)
        if node is not None and node.status == "待运行":
            self._move(node_id, "运行中", "framework")
        self._move(node_id, "完成", "framework")

    def _move(self, node_id: str, new: StatusLabel, actor: Actor, **values: str) -> None:
        node = self.plan.node(node_id)
        assert node is not None, node_id
        self._set(node_id, status=transition(node.status, new, actor), **values)

    def _set(self, node_id: str, **values: Any) -> None:
        nodes = tuple(replace(n, **values) if n.id == node_id else n for n in self.plan.nodes)
        self.plan = replace(self.plan, nodes=nodes)


def start_ep(
    spec: AgentSpec,
    plan_id: str,
    seq_no: int,
    previous: AgentExecResult | None,
    plan_context: Mapping[str, Any],
    load: Callable[[str], Mapping[str, Any]] | None = None,
) -> EPTracker | None:
    """The tracker for one step of `spec` (None when the agent has no internal plan).

    `previous` is the step's last result: an interrupted attempt's EP is continued, with the
    user's newest answer for this step written on the confirm node that asked. Its `ep` is DOT
    text, or a `store://` id that `load` resolves (the plan keeps EPs by reference).
    """
    template = internal_plan_of(spec)
    if template is None:
        return None
    prior = previous["context"].get("ep") if previous and previous["status"] == "interrupted" else None
    if isinstance(prior, str) and prior.startswith("store://") and load is not None:
        prior = load(prior).get("dot")
    answers = plan_context.get("answers", {}).get(str(seq_no), [])
    return EPTracker.start(
        template,
        ep_id=f"{plan_id}:{seq_no}",
        tools=spec.tools,
        agent=spec.name,
        previous=prior if isinstance(prior, str) else None,
        answer=str(answers[-1]) if answers else "",
    )
