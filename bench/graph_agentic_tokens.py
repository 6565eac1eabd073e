"""Prompt tokens per model call over a long model-mode conversation with agentic steps (issue 13).

    PYTHONPATH=. .venv/bin/python bench/graph_agentic_tokens.py [--turns 300]

Every turn is one request on the same conversation through `PlanRunner` with PLANGRAPH_MODEL set
and OPENAI_BASE_URL pointing at tests/support/openai_server.py's ScriptedOpenAIServer (a real
OpenAI-compatible HTTP server on 127.0.0.1). The scripted model (`Conversation`) plans mixed steps
by `create_plan` — knowledge questions and follow-ups, the general assistant, PV calculation +
sensitivity (+ report), a knowledge step feeding the assistant — sometimes after a `search_block`
round; inside the agent loops it calls the real tools over several turns (`knowledge_search`,
`search_block` / `list_blocks` on another sub-task's id named in its window, `find_results`,
`pv_calculate` / `pv_sensitivity` / `pv_reverse`, `load` of a `store://` id, `search_todo`), two
calls in one turn now and then; it revises plans (PLANGRAPH_PLAN_REVISIONS=2: drops a sensitivity
step, adds a knowledge step, else keeps the plan), keeps the agents' internal plans, judges
standing facts ("以后报告都用英文", "我们的电价是0.72"), writes block gists
(PLANGRAPH_MODEL_SUMMARIES=1) and the summary.

Tokens are the server's `usage.prompt_tokens` count of each request's messages (1 per CJK
character, ⌈len/4⌉ per other word, 4 per message; tool schemas not counted), grouped by the
calling component. Target: every call at or under PLANGRAPH_TOKEN_BUDGET (2000 by default).
tests/integration/agentic/test_agentic_tokens.py runs the same conversation for 24 turns.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodes.finalizer import FINALIZER_PROMPT
from nodes.kit.agentic_prompt import EARLIER_HEADER
from nodes.kit.ep import EP_REFLECT_PROMPT
from nodes.remember import SUMMARY_PROMPT
from nodes.standing import JUDGE_PROMPT
from tests.support.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    prompt_tokens,
    reply_text,
    reply_tool_call,
    reply_tool_calls,
)
from tools.kb.answer import KB_ANSWER_PROMPT
from tools.plans.dot import dot_to_internal_plan, dot_to_plan, internal_plan_to_dot
from tools.plans.revise import REVISE_PROMPT, prompt_dot

__all__ = ["Conversation", "Report", "kind_of", "session"]

PV = "帮我测算杭州市余杭区500kW工商业屋顶光伏的收益，并做敏感性分析"
# the parser misses a capacity given as a panel count (it reads 半兆瓦 since session 9): the model fills it
PV_REPORT = "帮我测算杭州市余杭区工商业屋顶铺一千片500W板子的光伏收益，做敏感性分析并生成报告"
FIELDS = {"location": "杭州市余杭区", "project_type": "工商业", "capacity_kw": 500}
QUESTIONS = [
    "分布式光伏余电上网电价怎么定？",
    "工商业分布式光伏需要备案吗？",
    "光伏组件的衰减一般怎么算？",
    "自发自用余电上网和全额上网有什么区别？",
    "光伏组件多久清洗一次？",
]
# turn number -> a request stating a standing fact (alone, or with a PV request)
FACTS = {
    12: "以后报告都用英文",
    21: "我们的电价是0.72，帮我测算杭州市余杭区500kW工商业屋顶光伏的收益",
    160: "记住：我们的电价是0.68",
}
_PLAN_IN_PROMPT = re.compile(r"当前计划（\*id=(.*?)）：\n(digraph G \{.*\})", re.S)
_EP_IN_PROMPT = re.compile(r"当前 EP（\*id=(.*?)）：\n(digraph G \{.*?\n\})\n", re.S)
_OTHER_TODO = re.compile(r"- (todo_[0-9A-Za-z]+_\d+)（")
_STORE = re.compile(r"store://[0-9a-f]{32}")
_EP_PREFIX = EP_REFLECT_PROMPT.split("{", 1)[0]


def _step(seq: int, agent: str, requirement: str, deps: list[int] | None = None) -> dict[str, Any]:
    return {"seqNo": seq, "agentName": agent, "requirement": requirement, "dependsOn": deps or []}


def _system(body: dict[str, Any]) -> str:
    first = body["messages"][0] if body["messages"] else {}
    return str(first.get("content") or "") if first.get("role") == "system" else ""


def _tools(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def kind_of(body: dict[str, Any]) -> str:
    """The component that made a chat request (by its tools and system prompt)."""
    tools, system = _tools(body), _system(body)
    if "create_plan" in tools:
        return "planner"
    if "ask_user" in tools:
        return "agent loop turn: " + ("knowledge" if "知识助手" in system else "assistant")
    if tools == {"PvInputs"}:
        return "PV field extraction"
    for prefix, name in (
        (REVISE_PROMPT, "plan revision"),
        (_EP_PREFIX, "EP reflection"),
        (FINALIZER_PROMPT, "summary (finalizer)"),
        (JUDGE_PROMPT, "standing-fact judge"),
        (SUMMARY_PROMPT, "block gist"),
        (KB_ANSWER_PROMPT, "knowledge answer (offline path)"),
    ):
        if system.startswith(prefix):
            return name
    return "other: " + system[:24]


Action = Callable[[dict[str, Any]], Reply]


def _call(name: str, args: dict[str, Any]) -> Action:
    return lambda body: reply_tool_call(name, args)


def _other_todo(query: str, tool: str = "search_block") -> Action:
    """search_block (or list_blocks) on another sub-task named in the window, by its id."""

    def act(body: dict[str, Any]) -> Reply:
        named = _OTHER_TODO.findall(_system(body))
        if tool == "list_blocks":
            return reply_tool_call("list_blocks", {"todo_id": named[-1]} if named else {})
        return reply_tool_call("search_block", {"query": query, **({"todo_id": named[-1]} if named else {})})

    return act


def _load_newest(body: dict[str, Any]) -> Reply:
    refs = [r for m in body["messages"] for r in _STORE.findall(str(m.get("content") or ""))]
    if not refs:
        return reply_tool_call("find_results", {})
    return reply_tool_call("load", {"data_id": refs[-1], "limit": 1500})


def _search_todo(body: dict[str, Any]) -> Reply:
    tool = next(t for t in body["tools"] if t["function"]["name"] == "search_todo")
    todo = tool["function"]["description"].rsplit("Earlier steps: ", 1)[1].rstrip(".").split(", ")[0]
    return reply_tool_call("search_todo", {"todo_id": todo, "query": "清洗 运维"})


def _two(first: tuple[str, dict[str, Any]], second: tuple[str, dict[str, Any]]) -> Action:
    return lambda body: reply_tool_calls([first, second])


@dataclass
class Turn:
    """One request and what the scripted model does for it."""

    text: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    loops: dict[str, list[Action]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    plan_search: bool = False


def script(turn: int) -> Turn:
    """The request of `turn` (1-based) and the scripted model's plan and loop actions for it."""
    question = QUESTIONS[turn % len(QUESTIONS)]
    if turn in FACTS:
        text = FACTS[turn]
        return Turn(text, [_step(0, "pv_calc", "测算收益")] if "测算" in text else [])
    kind = (turn - 1) % 10
    if kind in (0, 8):
        loop = [
            _call("knowledge_search", {"query": question}),
            _other_todo("上网电价 政策", "list_blocks"),
            _call("knowledge_search", {"query": question[:6] + " 政策 规定"}),
        ]
        return Turn(
            f"{question}（第 {turn} 轮）",
            [_step(0, "knowledge", question)],
            {"knowledge": loop},
            {"knowledge": "根据资料[1]，具体以当地政策为准；另见[2]。"},
        )
    if kind == 1:
        return Turn(PV, [_step(0, "pv_calc", "测算收益"), _step(1, "sensitivity", "敏感性分析", [0])])
    if kind in (2, 9):
        loop = [
            _call("find_results", {"kind": "pv_case"}),
            _call("pv_calculate", {"location": "上海", "project_type": "户用", "capacity_kw": 10}),
            _two(("pv_sensitivity", {}), ("knowledge_search", {"query": "户用光伏 补贴"})),
            _call("pv_reverse", {"target_kind": "irr", "target": 0.08, "solve_for": "capex_yuan_per_w"}),
            _load_newest,
        ]
        return Turn(
            "帮我看看上海一个10kW户用屋顶的收益，IRR要到8%的话造价最高能到多少？",
            [_step(0, "assistant", "测算上海10kW户用光伏并逆向求造价上限")],
            {"assistant": loop},
            {"assistant": "上海10kW户用方案已测算，造价上限见逆向寻优结果。"},
        )
    if kind == 3:
        loop = [
            _other_todo("上网电价"),
            _call("knowledge_search", {"query": "户用光伏 " + question[:8]}),
        ]
        return Turn(
            "那户用的呢？",
            [_step(0, "knowledge", "户用光伏的情况")],
            {"knowledge": loop},
            {"knowledge": "户用光伏的情况见资料[1]。"},
            plan_search=True,
        )
    if kind == 4:
        return Turn(
            "其他参数不变，地址换成上海再算一次", [_step(0, "pv_calc", "换成上海重新测算")], plan_search=True
        )
    if kind == 5:
        steps = [
            _step(0, "pv_calc", "测算收益"),
            _step(1, "sensitivity", "敏感性分析", [0]),
            _step(2, "report", "生成报告", [0, 1]),
        ]
        return Turn(PV_REPORT, steps)
    if kind == 6:
        loop = [
            _call("find_results", {}),
            _other_todo("测算 方案"),
            _load_newest,
            _call("search_block", {"query": "敏感性 IRR"}),
        ]
        return Turn(
            "帮我整理一下这次对话里算过的方案，哪个最好？",
            [_step(0, "assistant", "整理本对话的测算方案并比较")],
            {"assistant": loop},
            {"assistant": "本对话测算过的方案已整理，IRR 最高的是余杭区工商业方案。"},
        )
    loop = [_search_todo, _call("find_results", {"kind": "kb_answer"})]
    return Turn(
        "光伏组件多久清洗一次？然后帮我安排一个运维计划",
        [_step(0, "knowledge", "回答组件清洗周期"), _step(1, "assistant", "据此安排运维计划", [0])],
        {"knowledge": [_call("knowledge_search", {"query": "组件 清洗 周期"})], "assistant": loop},
        {"knowledge": "组件一般每年清洗2到4次[1]。", "assistant": "运维计划：每季度清洗一次组件，每月巡检。"},
    )


class Conversation:
    """The scripted model of the whole conversation: `respond(body)` for ScriptedOpenAIServer."""

    def __init__(self) -> None:
        self.turn = 0
        self.plan: Turn = Turn("")
        self.queues: dict[str, list[Action]] = {}
        self.revisions = 0
        self._lock = threading.Lock()

    def start(self, turn: int) -> str:
        """Begin `turn`; returns its request."""
        with self._lock:
            self.turn, self.plan = turn, script(turn)
            self.queues = {agent: list(actions) for agent, actions in self.plan.loops.items()}
            return self.plan.text

    def respond(self, body: dict[str, Any]) -> Reply:
        """The scripted model's reply to one chat request."""
        kind = kind_of(body)
        last = body["messages"][-1]
        if kind == "planner":
            if self.plan.plan_search and last["role"] != "tool":
                return reply_tool_call("search_block", {"query": "上次 测算 参数"})
            steps = self.plan.steps or [_step(0, "knowledge", self.plan.text)]
            return reply_tool_call("create_plan", {"steps": steps})
        if kind.startswith("agent loop turn"):
            return self._loop("knowledge" if kind.endswith("knowledge") else "assistant", body)
        if kind == "PV field extraction":
            place = {"location": "上海"} if "上海" in self.plan.text else FIELDS
            return reply_tool_call("PvInputs", place)
        if kind == "plan revision":
            return reply_text(self._revise(str(last["content"])))
        if kind == "EP reflection":
            ep_id, graph = _EP_IN_PROMPT.search(str(last["content"])).groups()  # type: ignore[union-attr]
            ep = internal_plan_to_dot(dot_to_internal_plan(graph, plan_id=ep_id))
            return reply_text(f"@epupdatelog@\n无需更新\n@epupdatelog@\n@EP@\n*id={ep_id}\n*graph={ep}@EP@")
        if kind == "standing-fact judge":
            said = str(last["content"])
            return reply_text(json.dumps({"remember": [{"quote": said, "about": said}]}, ensure_ascii=False))
        if kind == "block gist":
            return reply_text("测算与问答的要点：地点、容量与结论。")
        if kind == "knowledge answer (offline path)":
            return reply_text("根据资料[1]，以当地政策为准。")
        return reply_text("总结：各步骤已完成，详见上方结果。")

    def _loop(self, agent: str, body: dict[str, Any]) -> Reply:
        with self._lock:
            queue = self.queues.setdefault(agent, [])
            action = queue.pop(0) if queue else None
        if action is not None:
            return action(body)
        if not any(m["role"] == "tool" for m in body["messages"]):  # a step the plan did not script
            first = body["messages"][-1]["content"]
            if agent == "knowledge":
                return reply_tool_call("knowledge_search", {"query": str(first)[:40]})
            return reply_tool_call("find_results", {})
        return reply_text(self.plan.answers.get(agent, "根据资料[1]，以当地政策为准。"))

    def _revise(self, request: str) -> str:
        """Drop a waiting sensitivity step or add a knowledge step now and then; else keep the plan."""
        plan_id, graph = _PLAN_IN_PROMPT.search(request).groups()  # type: ignore[union-attr]
        plan = dot_to_plan(graph)
        waiting = {s["seqNo"]: s for s in plan["steps"] if s["status"] == "not_started"}
        with self._lock:
            self.revisions += 1
            turn_no = self.revisions
        note, steps = "无需调整", plan["steps"]
        if turn_no % 3 == 0 and any(s["agentName"] == "sensitivity" for s in waiting.values()):
            gone = next(n for n, s in waiting.items() if s["agentName"] == "sensitivity")
            steps = [
                {**s, "dependsOn": [d for d in s["dependsOn"] if d != gone]}
                for s in plan["steps"]
                if s["seqNo"] != gone
            ]
            note = "测算结果稳健，敏感性分析不再需要。"
        elif turn_no % 5 == 0 and waiting:
            new = max(s["seqNo"] for s in plan["steps"]) + 10
            added = {
                **_step(new, "knowledge", "补充相关的电价政策", [0]),
                "status": "not_started",
                "result": None,
            }
            steps = [*plan["steps"], added]
            note = "补充一个电价政策的知识步骤。"
        body = prompt_dot({**plan, "steps": steps})
        return f"@epupdatelog@\n{note}\n@epupdatelog@\n@EP@\n*id={plan_id}\n*graph={body}@EP@"


@contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass
class Report:
    """What one session measured.

    `per_turn`: per turn, each component's prompt tokens per call (server's count); `stops`: how
    the agentic steps' loops ended ("answered", "exhausted" …); `fitted`: loop turns whose prompt
    `nodes.kit.agentic_prompt.fit_turn` had to cut (a preview or a dropped turn in it); `wire_cut`:
    requests the wire-level fitter cut (expected 0: the bench gives the model a large window);
    `revisions`: the plan-revision log entries by status; `steps`: plan steps by final status.
    """

    per_turn: list[dict[str, list[int]]] = field(default_factory=list)
    stops: Counter[str] = field(default_factory=Counter)
    fitted: int = 0
    wire_cut: int = 0
    revisions: Counter[str] = field(default_factory=Counter)
    steps: Counter[str] = field(default_factory=Counter)


def _fitted(body: dict[str, Any]) -> bool:
    text = "\n".join(str(m.get("content") or "") for m in body["messages"])
    return EARLIER_HEADER in text or "用 load 分页读取）" in text or "需要全文时重新调用该工具" in text


def session(
    turns: int, data_dir: Path, on_turn: Callable[[int, dict[str, list[int]]], None] | None = None
) -> Report:
    """Run `turns` requests on one conversation and measure every model call (`Report`).

    Sets (and restores) the model-mode environment around the run: the scripted server,
    PLANGRAPH_PLAN_REVISIONS=2, PLANGRAPH_MODEL_SUMMARIES=1 and a 32k model window; the token
    budget is the caller's PLANGRAPH_TOKEN_BUDGET.
    """
    conversation = Conversation()
    report = Report()
    with ScriptedOpenAIServer(responder=conversation.respond) as server:
        env = {
            "PLANGRAPH_MODEL": "scripted",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "bench",
            "PLANGRAPH_DATA_DIR": str(data_dir),
            "PLANGRAPH_PLAN_REVISIONS": "2",
            "PLANGRAPH_MODEL_SUMMARIES": "1",
            # a window the wire-level fitter (tools/model/window.py) never cuts to: what is measured
            # is the prompt the nodes built within the token budget, not the fitter's safety net
            "PLANGRAPH_MODEL_CONTEXT": "32768",
        }
        with _environ(env):
            from plangraph.runner import PlanRunner

            with PlanRunner.open(user_id="bench", conversation_id="agentic", checkpoint_url="") as runner:
                for turn in range(1, turns + 1):
                    seen = len(server.requests)
                    outcome = runner.run(conversation.start(turn))
                    calls: dict[str, list[int]] = {}
                    for body in server.requests[seen:]:
                        kind = kind_of(body)
                        calls.setdefault(kind, []).append(prompt_tokens(body["messages"]))
                        report.fitted += kind.startswith("agent loop") and _fitted(body)
                        report.wire_cut += any(
                            "…（已截断）" in str(m.get("content")) for m in body["messages"]
                        )
                    report.per_turn.append(calls)
                    for step in (outcome.plan or {}).get("steps", []):
                        report.steps[step["status"]] += 1
                        agentic = ((step.get("result") or {}).get("context") or {}).get("agentic")
                        if agentic:
                            report.stops[agentic["stop"]] += 1
                    for entry in (outcome.plan or {}).get("context", {}).get("revisions", []):
                        report.revisions[entry.get("status", "?")] += 1
                    if on_turn is not None:
                        on_turn(turn, calls)
    return report


def main() -> None:
    """Run the session, print the table, rewrite this bench's section of docs/benchmarks.md."""
    from bench.docblock import write_section
    from bench.graph_common import DOC, machine, table

    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=300)
    args = ap.parse_args()
    budget = int(os.environ.get("PLANGRAPH_TOKEN_BUDGET", "2000"))
    work = Path(tempfile.mkdtemp(prefix="plangraph-bench-agentic-"))
    start = time.perf_counter()
    marks = sorted({1, 10, 50, 100, 200, args.turns} & set(range(1, args.turns + 1)))

    def show(turn: int, calls: dict[str, list[int]]) -> None:
        if turn in marks or turn % 25 == 0:
            top = {k: max(v) for k, v in calls.items()}
            print(turn, top, f"{time.perf_counter() - start:.0f}s", flush=True)

    report = session(args.turns, work / "data", show)
    per_turn = report.per_turn
    elapsed = time.perf_counter() - start
    load = Path("/proc/loadavg").read_text().split()[:3]
    kinds = sorted({k for calls in per_turn for k in calls})

    def window(kind: str, mark: int) -> object:
        """The largest call of `kind` in the 10 turns ending at `mark` (one cycle of the script)."""
        seen = [t for calls in per_turn[max(0, mark - 10) : mark] for t in calls.get(kind, [])]
        return max(seen) if seen else "–"

    rows = []
    for kind in kinds:
        series = [t for calls in per_turn for t in calls.get(kind, [])]
        over = sum(t > budget for t in series)
        rows.append([kind, len(series), *[window(kind, m) for m in marks], max(series), over])
    labels = [f"turn {m}" if m == 1 else f"turns {max(1, m - 9)}–{m}" for m in marks]
    headers = ["component", "calls", *labels, "max", f"calls > {budget}"]
    text = table(headers, rows)
    every = [t for calls in per_turn for v in calls.values() for t in v]
    worst = max(every)
    verdict = "within" if worst <= budget else "OVER"
    facts = ", ".join(f"{t} (“{FACTS[t]}”)" for t in FACTS if t <= args.turns)
    outcomes = (
        f"Agentic steps: {dict(report.stops)} (loop stops); plan steps by status {dict(report.steps)}; "
        f"plan revisions {dict(report.revisions)}. Agent-loop turns whose prompt had to be fitted "
        f"(older results previewed or whole turns dropped): {report.fitted}. Requests cut by the wire-level "
        f"fitter: {report.wire_cut}."
    )
    print(text)
    print(outcomes)
    write_section(
        DOC,
        "<!-- graph-agentic-tokens:start -->",
        "<!-- graph-agentic-tokens:end -->",
        f"""## Prompt tokens per model call over a {args.turns}-turn conversation with agentic steps (model mode)

Command: `PYTHONPATH=. .venv/bin/python bench/graph_agentic_tokens.py --turns {args.turns}`
({elapsed / 60:.1f} min; load average {" ".join(load)} at the end; {machine()}).

{args.turns} requests on one conversation through `PlanRunner` in model mode against
ScriptedOpenAIServer on 127.0.0.1 (PLANGRAPH_PLAN_REVISIONS=2, PLANGRAPH_MODEL_SUMMARIES=1, a
32k model window so the wire-level fitter never cuts). The scripted model (a 10-turn cycle) plans
mixed steps — knowledge questions and follow-ups, the general assistant, PV calculation +
sensitivity (+ report), a knowledge step feeding the assistant — sometimes after a `search_block`
round; inside the agent loops it calls the real tools over up to 6 turns (knowledge_search,
search_block / list_blocks by another sub-task's id, find_results, pv_calculate / pv_sensitivity /
pv_reverse, load, search_todo, two calls in one turn); it revises plans (drops a sensitivity step,
adds a knowledge step, else keeps the plan), and standing facts are stated at turns {facts}.
Numbers are the server's prompt tokens (1 per CJK character, ⌈len/4⌉ per other word, 4 per
message; tool schemas excluded) of the largest call of that component in the 10 turns ending at
that turn (one cycle of the script); "max" is over the whole conversation. {len(every)} model
calls in all.

{text}

{outcomes}

Largest prompt of the whole conversation: **{worst} tokens** — {verdict} the {budget}-token budget.
""",
    )


if __name__ == "__main__":
    main()
