"""Model mode end to end on a scripted OpenAI-compatible server: what the user sees and what is kept.

Issue 17 items 3–5 and issue 12 items 3 and 9: a garbage model body is a clear error (CLI `error`
event, HTTP 503) with a resumable state; the planner's raw model text is not streamed; a model
summary whose figures are not the computed ones is replaced by the deterministic one; a
model-written step requirement cannot put values into a calculation.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from plangraph.runner import PlanRunner
from tests.reliability.s1_kill import cli_env
from tests.support.openai_server import (
    ScriptedOpenAIServer,
    fault_empty_stream,
    fault_garbage_body,
    fault_status,
    reply_text,
    reply_tool_call,
    reply_tool_calls,
)

QUESTION = "分布式光伏余电上网电价怎么定？"
KNOWLEDGE_PLAN = {
    "steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答余电上网电价政策", "dependsOn": []}]
}
GIBBERISH = "The the of photovoltaic banana 计划 计划 计划 is is is"


def _planner(body) -> bool:
    return any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))


class Switch:
    """A responder that sends garbage until `healthy` is set, then plans one knowledge step."""

    def __init__(self) -> None:
        self.healthy = False

    def __call__(self, body):
        if not self.healthy:
            return fault_garbage_body()
        if _planner(body):
            return reply_tool_call("create_plan", KNOWLEDGE_PLAN)
        return reply_text("根据资料[1]，余电上网电量按当地燃煤基准价结算。")


def _cli(args, env):
    return subprocess.run(
        [sys.executable, "-m", "plangraph.cli", *args], env=env, capture_output=True, text=True, timeout=240
    )


def test_garbage_body_in_the_cli_is_an_error_event_and_resume_finishes(tmp_path):
    switch = Switch()
    with ScriptedOpenAIServer(responder=switch) as server:
        env = {
            **cli_env(tmp_path / "data"),
            "PLANGRAPH_MODEL": "scripted",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test",
            "PLANGRAPH_MODEL_TIMEOUT": "10",
        }
        failed = _cli(["run", QUESTION, "--conversation", "g1", "--json"], env)
        switch.healthy = True
        resumed = _cli(["resume", "--conversation", "g1", "--json"], env)
    assert "Traceback" not in failed.stderr, failed.stderr[-800:]
    assert failed.returncode == 1
    events = [json.loads(line) for line in failed.stdout.splitlines() if line.startswith("{")]
    error = events[-1]
    assert error["event"] == "error"
    # (the knowledge loop's call has tools, so it is not streamed: the body is quoted as JSON that is not)
    assert "不是 OpenAI 兼容的 JSON" in error["message"] and "502 Bad Gateway" in error["message"]
    assert "OPENAI_BASE_URL" in error["message"]
    assert "plangraph resume --conversation g1" in error["message"]
    assert resumed.returncode == 0, resumed.stdout[-800:] + resumed.stderr[-800:]
    assert "余电上网" in resumed.stdout


def test_garbage_body_over_http_is_a_503_that_says_how_to_continue(tmp_path, monkeypatch):
    from plangraph.server import create_app
    from tests.integration.http.http_support import KEY_ALICE, KEYS, serve

    monkeypatch.setenv("PLANGRAPH_EMBEDDINGS", "hash")
    with ScriptedOpenAIServer(responder=lambda body: fault_garbage_body()) as server:
        monkeypatch.setenv("PLANGRAPH_MODEL", "scripted")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        app = create_app(
            data_dir=tmp_path / "data", checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0
        )
        with serve(app) as url:
            import httpx

            with httpx.Client(base_url=url, headers={"X-API-Key": KEY_ALICE}, timeout=120) as client:
                answer = client.post(
                    "/plangraph/invoke",
                    json={"input": {"messages": [{"type": "human", "content": QUESTION}]}},
                    headers={"X-Conversation-Id": "g-http"},
                )
    assert answer.status_code == 503, answer.text
    detail = json.dumps(answer.json(), ensure_ascii=False)
    assert "不是 OpenAI 兼容的 JSON" in detail and "502 Bad Gateway" in detail
    assert '"resume": null' in detail.replace("\\", "")


def test_the_planners_raw_model_text_is_not_streamed_and_a_fault_plans_offline(model_env, data_dir):
    script = [reply_text(GIBBERISH * 20), fault_garbage_body()]
    with ScriptedOpenAIServer(script, responder=Switch().__call__) as server:
        server.responder = lambda body: reply_text("根据资料[1]，余电上网电量按当地燃煤基准价结算。")
        model_env(server)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="raw") as runner:
            outcome = runner.run(QUESTION, on_chunk=chunks.append)
        second = server.requests[1]
    shown = json.dumps(chunks, ensure_ascii=False)
    assert "banana" not in shown  # the planner's prose is not progress
    # the prose round was summarised, not carried whole into the next round
    assert len(json.dumps(second["messages"], ensure_ascii=False)) < len(GIBBERISH) * 20
    assert [s["agentName"] for s in outcome.plan["steps"]] == ["knowledge"]
    assert "已改用离线规划" in outcome.summary and "不是 OpenAI 兼容" in outcome.summary


PV_PLAN = {
    "steps": [
        {"seqNo": 0, "agentName": "pv_calc", "requirement": "上海 1000kW 工商业光伏测算", "dependsOn": []}
    ]
}


def test_values_in_a_model_written_requirement_do_not_reach_the_calculation(model_env, data_dir):
    def respond(body):
        if _planner(body):
            return reply_tool_call("create_plan", PV_PLAN)
        return reply_text("好的。")  # no PvInputs call: the parser's fields stand

    with ScriptedOpenAIServer(responder=respond) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="req") as runner:
            outcome = runner.run("帮我做一个光伏经济测算")
    assert outcome.interrupt is not None  # it asks the user instead of computing 上海 1000kW
    question = json.dumps(outcome.interrupt, ensure_ascii=False)
    assert "上海" not in question and "1000" not in question


S1 = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
S1_PLAN = {"steps": [{"seqNo": 0, "agentName": "pv_calc", "requirement": S1, "dependsOn": []}]}


@pytest.mark.parametrize("honest", [True, False])
def test_a_model_summary_is_used_only_when_its_figures_are_computed_ones(model_env, data_dir, honest):
    def respond(body):
        if _planner(body):
            return reply_tool_call("create_plan", S1_PLAN)
        if body["messages"][0]["content"].startswith("你是总结器"):
            computed = re.search(r"\d+\.\d+%", body["messages"][-1]["content"])
            figure = computed.group(0) if honest and computed else "74.18%"
            return reply_text(f"测算完成：收益率为 {figure}。")
        return (
            reply_tool_calls([("PvInputs", {})])
            if "PvInputs" in json.dumps(body.get("tools", []))
            else reply_text("好")
        )

    with ScriptedOpenAIServer(responder=respond) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id=f"sum-{honest}") as runner:
            outcome = runner.run(S1)
    assert outcome.plan["steps"][0]["status"] == "completed"
    if honest:
        assert outcome.summary.startswith("测算完成：收益率为")
    else:
        assert "74.18%" not in outcome.summary and "计划执行结束" in outcome.summary


def test_tool_calls_are_asked_for_unstreamed_which_llama_cpp_server_cannot_stream(model_env, data_dir):
    # llama_cpp.server (chatml-function-calling) answers a streamed request with tools and
    # tool_choice="auto" with 200 and a stream that breaks off ("Automatic streaming tool choice is
    # not supported") whenever the model calls a tool: streamed, no plan could ever be made there.
    # It also refuses an assistant turn whose content is null (OpenAI's form for a turn that only
    # calls tools) with HTTP 500 and a validation error, so a second planning round never ran.
    def llama_cpp_server(body):
        if any(m["role"] == "assistant" and m.get("content") is None for m in body["messages"]):
            return fault_status(500, "1 validation error: messages.1.content Input should be a valid string")
        if body.get("stream") and body.get("tools") and body.get("tool_choice") == "auto":
            return fault_empty_stream()
        if _planner(body):
            if not any(m["role"] == "tool" for m in body["messages"]):
                return reply_tool_call("list_agents", {})  # round 1, as the prompt asks
            return reply_tool_call("create_plan", KNOWLEDGE_PLAN)
        return reply_text("根据资料[1]，余电上网电量按当地燃煤基准价结算。")

    with ScriptedOpenAIServer(responder=llama_cpp_server) as server:
        model_env(server)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="unstreamed") as runner:
            outcome = runner.run(QUESTION, on_chunk=chunks.append)
        sent = server.requests
    assert outcome.plan["context"].get("requirements_by") == "model"  # the model planned
    assert "离线规划" not in outcome.summary
    assert [s["status"] for s in outcome.plan["steps"]] == ["completed"]
    with_tools = [r for r in sent if r.get("tools")]
    assert with_tools and not any(r.get("stream") for r in with_tools)
    planning = [r for r in sent if _planner(r)]
    assert len(planning) == 2 and planning[1]["messages"][-2]["content"] == ""  # list_agents' turn
    assert any(r.get("stream") and not r.get("tools") for r in sent)  # the summary still streams
