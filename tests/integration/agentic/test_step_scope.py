"""Sub-task isolation through the graph: a step's prompt holds its own todo; an earlier one is reached by id.

Two requests on one conversation, each planned as one step of the general assistant (same agent
namespace, two todos), against a real OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import json
import re

from plangraph.runner import PlanRunner
from tests.support.openai_server import ScriptedOpenAIServer, reply_text, reply_tool_call

_NAMED = re.compile(r"- (todo_[0-9A-Za-z]+_\d+)（")


def _plan(requirement: str):
    steps = [{"seqNo": 0, "agentName": "assistant", "requirement": requirement, "dependsOn": []}]
    return reply_tool_call("create_plan", {"steps": steps})


def _summary(body):
    if body.get("tools"):
        raise AssertionError("unscripted tool request")
    return reply_text("总结：已完成。")


def _loop(server) -> list[dict]:
    return [
        r for r in server.requests if any(t["function"]["name"] == "ask_user" for t in r.get("tools", []))
    ]


def _named(body) -> list[str]:
    return _NAMED.findall(body["messages"][0]["content"])


def test_a_later_step_sees_only_its_todo_and_reads_the_earlier_one_by_its_id(
    model_env, data_dir, monkeypatch
):
    # a window the wire-level fitter (tools/model/window.py) never has to cut: the prompts are as built
    monkeypatch.setenv("PLANGRAPH_MODEL_CONTEXT", "32768")
    first = [
        _plan("测算杭州500kW工商业屋顶"),
        reply_tool_call("pv_calculate", {"location": "杭州", "project_type": "工商业", "capacity_kw": 500}),
        reply_text("杭州500kW工商业方案已测算，代号甲方案。"),
    ]
    with ScriptedOpenAIServer(first, responder=_summary) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="scope") as runner:
            done = runner.run("帮我测算杭州500kW工商业屋顶光伏")
            todo0 = done.plan["steps"][0]["result"]["context"]["todo_id"]
            server.enqueue(
                _plan("比较之前的方案"),
                reply_tool_call("search_block", {"query": "杭州 pv_calculate"}),
                lambda body: reply_tool_call(
                    "search_block", {"query": "杭州 pv_calculate", "todo_id": _named(body)[-1]}
                ),
                reply_text("之前的杭州方案就是甲方案。"),
            )
            later = runner.run("之前那个方案怎么样？")
        loop = _loop(server)
    assert done.plan["steps"][0]["status"] == "completed" and later.plan["steps"][0]["status"] == "completed"
    todo1 = later.plan["steps"][0]["result"]["context"]["todo_id"]
    assert todo1 != todo0
    head = loop[2]["messages"]  # the later step's first turn: its todo holds nothing yet
    assert [m["role"] for m in head] == ["system", "user"] and head[1]["content"] == "比较之前的方案"
    assert json.dumps({"todo_id": todo0}, ensure_ascii=False)[1:-1] not in head[0]["content"]
    assert _named(loop[2]) == [todo0]  # the earlier todo is only named, to be searched by id
    own = loop[3]["messages"][-1]["content"]  # search_block's default scope: the step's own todo
    assert own.startswith("没有找到与「杭州 pv_calculate」相关的历史记忆块") and "甲方案" not in own
    by_id = loop[4]["messages"][-1]["content"]
    assert f"b_{todo0}_" in by_id and ("甲方案" in by_id or "pv_calculate" in by_id)
