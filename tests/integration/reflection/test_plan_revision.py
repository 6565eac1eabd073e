"""A plan that adapts, through the real graph: a model behind a real OpenAI-compatible server on
127.0.0.1 revises the remaining steps after a step completes; the DOT carries the log; resuming
after a question does not review (or revise) the plan again."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import replace

from plangraph.runner import PlanRunner
from tests.reliability.s1_kill import cli_env
from tests.support.openai_server import ScriptedOpenAIServer, fault_garbage_body, reply_text, reply_tool_call
from tools.plans.dot import InternalNode, dot_to_internal_plan, dot_to_plan, internal_plan_to_dot
from tools.plans.revise import REVISE_PROMPT, prompt_dot

REQUEST = "帮我测算杭州余杭区500kW工商业屋顶光伏的收益，做敏感性分析并生成报告"
PLAN = {
    "steps": [
        {"seqNo": 0, "agentName": "pv_calc", "requirement": "测算收益", "dependsOn": []},
        {"seqNo": 1, "agentName": "sensitivity", "requirement": "敏感性分析", "dependsOn": [0]},
        {"seqNo": 2, "agentName": "report", "requirement": "生成报告", "dependsOn": [0, 1]},
    ]
}
DROP_NOTE = "测算结果稳健，敏感性分析不再需要，报告直接基于测算结果。"
QUESTION = "报告要不要附上测算的原始参数表？"
_PLAN_IN_PROMPT = re.compile(r"当前计划（\*id=(.*?)）：\n(digraph G \{.*\})", re.S)
_EP_IN_PROMPT = re.compile(r"当前 EP（\*id=(.*?)）：\n(digraph G \{.*?\n\})\n", re.S)


def _system(body: dict) -> str:
    return body["messages"][0]["content"] if body["messages"] else ""


def _revisions(requests: list[dict]) -> list[dict]:
    return [r for r in requests if _system(r) == REVISE_PROMPT]


def _answer(plan: dict, note: str) -> str:
    return f"@epupdatelog@\n{note}\n@epupdatelog@\n@EP@\n*id={plan['planId']}\n*graph={prompt_dot(plan)}@EP@"


def _reflect(body: dict, ask: bool = True):
    """EP reflection: the report step asks the user once (when `ask`); every other EP stays as it is."""
    ep_id, graph = _EP_IN_PROMPT.search(body["messages"][-1]["content"]).groups()
    ep = dot_to_internal_plan(graph, plan_id=ep_id)
    note = "无需更新"
    if ask and "「report」" in _system(body) and ep.node("3") is None:
        ask = InternalNode(
            id="3", label="确认报告附录", type="confirm", status="待用户输入中", question=QUESTION
        )
        ep, note = replace(ep, nodes=(*ep.nodes, ask), edges=(*ep.edges, ("2", "3"))), "请用户确认附录。"
    return reply_text(
        f"@epupdatelog@\n{note}\n@epupdatelog@\n@EP@\n*id={ep_id}\n*graph={internal_plan_to_dot(ep)}@EP@"
    )


def respond_dropping(body: dict, ask: bool = True):
    """Planner: three steps. Revision: drop the sensitivity step once, then keep the plan."""
    if any(t["function"]["name"] == "create_plan" for t in body.get("tools", [])):
        return reply_tool_call("create_plan", PLAN)
    if _system(body) == REVISE_PROMPT:
        plan_id, graph = _PLAN_IN_PROMPT.search(body["messages"][-1]["content"]).groups()
        plan = dot_to_plan(graph)
        waiting = {s["seqNo"] for s in plan["steps"] if s["status"] == "not_started"}
        if 1 in waiting:
            steps = [s for s in plan["steps"] if s["seqNo"] != 1]
            steps = [{**s, "dependsOn": [0]} if s["seqNo"] == 2 else s for s in steps]
            return reply_text(_answer({**plan, "steps": steps}, DROP_NOTE))
        return reply_text(_answer(plan, "无需调整"))
    if "执行计划（EP）维护者" in _system(body):
        return _reflect(body, ask)
    return reply_text("测算与报告已完成。")


def test_a_revision_drops_a_step_is_logged_in_the_dot_and_not_repeated_on_resume(model_env, data_dir):
    with ScriptedOpenAIServer([], responder=respond_dropping) as server:
        model_env(server, revisions=2)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="rev1") as runner:
            asked = runner.run(REQUEST, on_chunk=chunks.append)
            assert asked.interrupt is not None and asked.interrupt["question"] == QUESTION
            reviews_before_resume = len(_revisions(server.requests))
            done = runner.resume("不用附", on_chunk=chunks.append)
            dot = runner.render_plan("dot")
        requests = server.requests
    # step 0 was reviewed once (the drop), the report step once after it completed; nothing twice
    reviewed = [re.findall(r"- 步骤 (\d+)（", r["messages"][-1]["content"]) for r in _revisions(requests)]
    assert reviewed == [["0"], ["2"]] and reviews_before_resume == 1
    plan = done.plan
    assert done.interrupt is None
    assert [(s["seqNo"], s["agentName"], s["status"], s["dependsOn"]) for s in plan["steps"]] == [
        (0, "pv_calc", "completed", []),
        (2, "report", "completed", [0]),
    ]
    log = plan["context"]["revisions"]
    assert [(e["after"], e["status"]) for e in log] == [([0], "applied"), ([2], "unchanged")]
    assert log[0]["dropped"] == [1] and log[0]["rewired"] == [2] and log[0]["note"] == DROP_NOTE
    assert {
        "index": 0,
        "content": f"计划已调整（删除 1，调整顺序 2）：{DROP_NOTE}",
    } in chunks  # the stream chunk, tagged by the step whose completion led to it
    assert (
        f'epupdatelog="1. 步骤 0 完成后（已调整：删除 1，调整顺序 2）：{DROP_NOTE}\\n2. 步骤 2 完成后（无需调整）：无需调整"'
        in dot
    )
    assert dot_to_plan(dot) == plan  # the log reads back with the plan (its context)
    assert not any(r["messages"][-1]["content"].startswith("敏感性") for r in requests)


def respond_badly(body: dict):
    """Planner: three steps. Revision: always drop the finished step 0 (invalid)."""
    if any(t["function"]["name"] == "create_plan" for t in body.get("tools", [])):
        return reply_tool_call("create_plan", PLAN)
    if _system(body) == REVISE_PROMPT:
        plan_id, graph = _PLAN_IN_PROMPT.search(body["messages"][1]["content"]).groups()
        plan = dot_to_plan(graph)
        steps = [{**s, "dependsOn": []} for s in plan["steps"] if s["seqNo"] != 0]
        return reply_text(_answer({**plan, "steps": steps}, "重新开始。"))
    if "执行计划（EP）维护者" in _system(body):
        ep_id, graph = _EP_IN_PROMPT.search(body["messages"][-1]["content"]).groups()
        return reply_text(f"@epupdatelog@\n无需更新\n@epupdatelog@\n@EP@\n*id={ep_id}\n*graph={graph}\n@EP@")
    return reply_text("已完成。")


def test_an_invalid_revision_is_logged_and_the_plan_runs_unchanged(model_env, data_dir):
    with ScriptedOpenAIServer([], responder=respond_badly) as server:
        model_env(server, revisions=1)
        with PlanRunner.open(user_id="u", conversation_id="rev2") as runner:
            done = runner.run(REQUEST)
        reviews = _revisions(server.requests)
    assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
    log = done.plan["context"]["revisions"]
    # rejected reviews apply nothing, so the bound (1) is never reached: each completed step is looked at once
    assert [(e["after"], e["status"]) for e in log] == [
        ([0], "rejected"),
        ([1], "rejected"),
        ([2], "rejected"),
    ]
    assert all("node 0 has started (completed) and cannot be removed" in e["note"] for e in log)
    assert len(reviews) == 6  # two attempts each, the second told what was wrong
    assert "cannot be removed" in reviews[1]["messages"][-1]["content"]


def test_a_revision_survives_a_kill_and_the_resumed_process_does_not_repeat_it(tmp_path):
    """The CLI is SIGKILLed while the report step runs (after the revision); `resume` in a new process."""
    running: dict[str, subprocess.Popen] = {}
    killed = threading.Event()

    def respond(body: dict):
        if "「report」" in _system(body) and not killed.is_set():
            killed.set()
            os.kill(running["cli"].pid, signal.SIGKILL)
            return fault_garbage_body()  # nobody reads it
        return respond_dropping(body, ask=False)

    with ScriptedOpenAIServer([], responder=respond, strict=False) as server:
        env = {
            **cli_env(tmp_path / "data"),
            "PLANGRAPH_MODEL": "scripted",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test",
            "PLANGRAPH_MODEL_TIMEOUT": "20",
            "PLANGRAPH_PLAN_REVISIONS": "2",
        }
        cli = [sys.executable, "-m", "plangraph.cli"]
        running["cli"] = subprocess.Popen(
            [*cli, "run", REQUEST, "--conversation", "k1", "--json"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert running["cli"].wait(timeout=240) == -signal.SIGKILL
        resumed = subprocess.run(
            [*cli, "resume", "--conversation", "k1", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        shown = subprocess.run(
            [*cli, "plan", "--conversation", "k1", "--format", "dot"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = server.requests
    assert resumed.returncode == 0, resumed.stdout[-800:] + resumed.stderr[-800:]
    reviewed = [re.findall(r"- 步骤 (\d+)（", r["messages"][1]["content"]) for r in _revisions(requests)]
    assert reviewed == [["0"], ["2"]]  # step 0's revision was made once, before the kill
    plan = dot_to_plan(shown.stdout)
    assert [(s["seqNo"], s["status"]) for s in plan["steps"]] == [(0, "completed"), (2, "completed")]
    assert [(e["after"], e["status"]) for e in plan["context"]["revisions"]] == [
        ([0], "applied"),
        ([2], "unchanged"),
    ]


def test_once_the_bound_is_reached_no_more_reviews_are_asked(model_env, data_dir):
    with ScriptedOpenAIServer([], responder=lambda body: respond_dropping(body, ask=False)) as server:
        model_env(server, revisions=1)
        with PlanRunner.open(user_id="u", conversation_id="rev3") as runner:
            done = runner.run(REQUEST)
        reviews = _revisions(server.requests)
    assert [(s["seqNo"], s["status"]) for s in done.plan["steps"]] == [(0, "completed"), (2, "completed")]
    assert len(reviews) == 1  # the one revision was applied after step 0; step 2 is not reviewed
    assert [(e["after"], e["status"]) for e in done.plan["context"]["revisions"]] == [([0], "applied")]
