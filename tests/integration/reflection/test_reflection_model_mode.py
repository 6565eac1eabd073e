"""Reflection mode in a real run: a model behind a real OpenAI-compatible server on 127.0.0.1 refreshes
pv_calc's internal plan, the step asks the model's question, and the answer completes it."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace

from plangraph.cli import main
from plangraph.runner import PlanRunner
from tests.support.openai_server import ScriptedOpenAIServer, reply_text, reply_tool_call
from tools.plans.dot import InternalNode, dot_to_internal_plan, internal_plan_to_dot

REQUEST = "帮我测算杭州余杭区500kW工商业屋顶光伏的收益"
PLAN = {"steps": [{"seqNo": 0, "agentName": "pv_calc", "requirement": REQUEST, "dependsOn": []}]}
QUESTION = "测算得到的 IRR 明显高于同类项目，请确认电价和造价是否无误？"
_CURRENT = re.compile(r"当前 EP（\*id=(.*?)）：\n(digraph G \{.*?\n\})\n", re.S)


def _reflection(body: dict) -> bool:
    return "执行计划（EP）维护者" in body["messages"][0]["content"]


def _planner(body: dict) -> bool:
    return any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))


def respond(body: dict):
    """Planner: one pv_calc step. Reflection: ask once, then keep the plan. Otherwise: a summary."""
    if _planner(body):
        return reply_tool_call("create_plan", PLAN)
    if not _reflection(body):
        return reply_text("测算完成：IRR 约 18.9%。")
    ep_id, graph = _CURRENT.search(body["messages"][-1]["content"]).groups()
    plan = dot_to_internal_plan(graph, plan_id=ep_id)
    if plan.node("3") is None:
        ask = InternalNode(
            id="3", label="确认收益偏高的原因", type="confirm", status="待用户输入中", question=QUESTION
        )
        plan, note = (
            replace(plan, nodes=(*plan.nodes, ask), edges=(*plan.edges, ("2", "3"))),
            "收益偏高，请用户确认。",
        )
    else:
        note = "无需更新"
    return reply_text(
        f"@epupdatelog@\n{note}\n@epupdatelog@\n@EP@\n*id={ep_id}\n*graph={internal_plan_to_dot(plan)}@EP@"
    )


def test_a_reflected_update_makes_the_step_ask_and_the_answer_completes_it(
    model_env, data_dir, tmp_path, capsys
):
    with ScriptedOpenAIServer([], responder=respond) as server:
        model_env(server)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="r1") as runner:
            asked = runner.run(REQUEST, on_chunk=chunks.append)
            assert asked.interrupt is not None and asked.interrupt["question"] == QUESTION
            waiting = dot_to_internal_plan(runner.render_plan("dot", step=0))
            assert [(n.id, n.status) for n in waiting.nodes] == [
                ("1", "完成"),
                ("2", "完成"),
                ("3", "待用户输入中"),
            ]
            done = runner.resume("确认无误", on_chunk=chunks.append)
        requests = server.requests
    assert done.interrupt is None and done.plan["steps"][0]["status"] == "completed"
    assert any(c["content"] == "执行计划已更新：收益偏高，请用户确认。" and c["index"] == 0 for c in chunks)
    reflections = [r for r in requests if _reflection(r)]
    assert len(reflections) == 2  # one after each run of pv_economics, each answered well at once
    assert all([m["role"] for m in r["messages"]] == ["system", "user"] for r in reflections)

    assert main(["plan", "--conversation", "r1", "--user", "u", "--step", "0", "--format", "dot"]) == 0
    final = dot_to_internal_plan(capsys.readouterr().out)
    assert [n.status for n in final.nodes] == ["完成", "完成", "完成"]
    assert final.node("3").answer == "确认无误" and final.node("2").tool_code == "pv_economics"
    assert main(["plan", "--conversation", "r1", "--user", "u", "--step", "0"]) == 0
    as_json = json.loads(capsys.readouterr().out)
    assert [n["status"] for n in as_json["nodes"]] == ["完成"] * 3 and ["2", "3"] in as_json["edges"]
    if shutil.which("dot"):
        svg = tmp_path / "ep.svg"
        assert (
            main(
                [
                    "plan",
                    "--conversation",
                    "r1",
                    "--user",
                    "u",
                    "--step",
                    "0",
                    "--format",
                    "svg",
                    "-o",
                    str(svg),
                ]
            )
            == 0
        )
        assert "<svg" in svg.read_text(encoding="utf-8") and "确认收益偏高的原因" in svg.read_text(
            encoding="utf-8"
        )
        capsys.readouterr()
    assert main(["plan", "--conversation", "r1", "--user", "u", "--step", "5"]) == 2
    assert "计划里没有步骤 5；可选的步骤：0" in capsys.readouterr().out
