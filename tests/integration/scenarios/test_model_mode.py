"""S6: model mode against a real OpenAI-compatible HTTP server on 127.0.0.1 (scripted)."""

from __future__ import annotations

import pytest

from plangraph.runner import PlanRunner, UserFacingError
from tests.support.openai_server import (
    ScriptedOpenAIServer,
    fault_status,
    reply_malformed_tool_call,
    reply_text,
    reply_tool_call,
    reply_unknown_tool_call,
)

KNOWLEDGE_PLAN = {
    "steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答余电上网电价政策", "dependsOn": []}]
}


def _role(body, role):
    return [m for m in body["messages"] if m["role"] == role]


def _not_planner(body) -> bool:
    return not any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))


def test_s6_model_plans_by_tool_calls_and_recovers_from_an_invalid_plan(model_env, data_dir):
    script = [
        reply_tool_call("list_agents", {}),
        reply_tool_call(
            "create_plan", {"steps": [{"seqNo": 0, "agentName": "policy_bot", "requirement": "x"}]}
        ),
        reply_malformed_tool_call("create_plan", '{"steps": [ {"seqNo": 0,'),
        reply_tool_call("create_plan", KNOWLEDGE_PLAN),
    ]
    with ScriptedOpenAIServer(
        script, responder=lambda body: reply_text("根据资料[1]，余电上网按当地燃煤基准价结算。")
    ) as server:
        model_env(server)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="m1") as runner:
            outcome = runner.run("分布式光伏余电上网电价怎么定？", on_chunk=chunks.append)
        requests = server.requests
    assert [s["agentName"] for s in outcome.plan["steps"]] == ["knowledge"]
    assert outcome.plan["steps"][0]["status"] == "completed"
    planner_requests = [r for r in requests if not _not_planner(r)]
    assert len(planner_requests) == 4
    assert all(r.get("tool_choice") == "auto" for r in planner_requests)  # else servers leave the tools out
    for body in requests:
        assert len(_role(body, "system")) == 1 and body["messages"][0]["role"] == "system"
    errors = [m["content"] for m in _role(planner_requests[2], "tool")]
    assert any(
        "unknown agent 'policy_bot'; available: assistant, knowledge, pv_calc, report, reverse_opt, sensitivity"
        in e
        for e in errors
    )
    assert any("not valid JSON" in m["content"] for m in _role(planner_requests[3], "tool"))
    streamed = "".join(c["content"] for c in chunks if c["index"] == -1)
    assert "余电上网" in streamed  # model tokens reached the custom stream
    assert outcome.summary


def test_model_that_never_plans_falls_back_to_the_offline_planner(model_env, data_dir):
    script = [reply_unknown_tool_call("web_search", {"q": "x"})] + [reply_text("我直接回答。")] * 3
    script += [
        reply_text("没有可填写的参数。")
    ] * 3  # the offline plan's pv_calc: field extraction, reflection
    with ScriptedOpenAIServer(script) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="m2") as runner:
            outcome = runner.run("帮我算一下")
            notice = runner.graph.get_state(runner.config).values["plan"]["context"]["notice"]
    # the offline planner plans it (pv_calc asks for the inputs), and says the model could not
    assert outcome.plan is not None and [s["agentName"] for s in outcome.plan["steps"]] == ["pv_calc"]
    assert outcome.interrupt is not None and notice.startswith("模型这次没能生成")


def test_dead_model_endpoint_is_a_clear_error_and_keeps_state(model_env, data_dir):
    with ScriptedOpenAIServer([fault_status(500)] * 12, strict=False) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="m3") as runner:
            with pytest.raises(UserFacingError, match="模型服务暂时不可用"):
                runner.run("分布式光伏余电上网电价怎么定？")
            state = runner.graph.get_state(runner.config)
            assert state.next == ("planner",)  # the request is kept; `plangraph resume` retries it


def test_the_knowledge_model_call_sees_its_own_todos_window_and_names_earlier_ones(
    model_env, data_dir, monkeypatch
):
    from memory.disclosure import ELSEWHERE_HEADER
    from nodes.kit.step import todo_id_of
    from tools.kb.answer import KB_ANSWER_PROMPT

    monkeypatch.setenv("PLANGRAPH_TOKEN_BUDGET", "1500")

    def respond(body):
        if not _not_planner(body):
            return reply_tool_call("create_plan", KNOWLEDGE_PLAN)
        return reply_text("根据资料[1]，余电上网电量按当地燃煤基准价结算。")

    with ScriptedOpenAIServer([], responder=respond) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="kbw") as runner:
            earlier = runner.run("分布式光伏余电上网电价怎么定？")
            runner.run("那户用光伏可以选择哪些上网模式？")
        answers = [r for r in server.requests if r["messages"][0]["content"].startswith(KB_ANSWER_PROMPT)]
    assert len(answers) == 2
    for body in answers:
        assert len(_role(body, "system")) == 1
        assert body["messages"][-1]["role"] == "user" and "检索内容" in body["messages"][-1]["content"]
        # the step's window is its own todo's (issue 13: sub-task isolation); nothing in it yet
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
    # the earlier step (another todo of the same agent) is named by id, to be searched with the tools
    todo0 = todo_id_of(earlier.plan["planId"], 0)
    assert ELSEWHERE_HEADER not in answers[0]["messages"][0]["content"]
    second = answers[1]["messages"][0]["content"]
    assert ELSEWHERE_HEADER in second and f"- {todo0}（" in second
    from tests.support.openai_server import count_tokens

    assert all(
        sum(4 + count_tokens(m.get("content") or "") for m in body["messages"]) <= 1500 for body in answers
    )


@pytest.mark.parametrize("summary_fails", [False, True])
def test_model_written_block_gists_when_configured(model_env, data_dir, monkeypatch, summary_fails):
    from nodes.kit.step import memory_namespace
    from nodes.remember import SUMMARY_PROMPT
    from tests.support.openai_server import fault_status
    from tests.support.services import graph_memory

    monkeypatch.setenv("PLANGRAPH_MODEL_SUMMARIES", "1")
    gist = "用户询问余电上网电价，答复按燃煤基准价结算"

    def respond(body):
        if not _not_planner(body):
            return reply_tool_call("create_plan", KNOWLEDGE_PLAN)
        if body["messages"][0]["content"] == SUMMARY_PROMPT:
            return fault_status(400) if summary_fails else reply_text(gist)
        return reply_text("根据资料[1]，余电上网电量按当地燃煤基准价结算。")

    with ScriptedOpenAIServer([], responder=respond, strict=False) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="gist") as runner:
            for question in [
                "分布式光伏余电上网电价怎么定？",
                "户用光伏可以全额上网吗？",
                "并网验收需要哪些材料？",
            ]:
                outcome = runner.run(question)
                assert outcome.plan["steps"][0]["status"] == "completed"
        summary_calls = [r for r in server.requests if r["messages"][0]["content"] == SUMMARY_PROMPT]
    blocks = graph_memory(data_dir).list_blocks(memory_namespace("planner", "u", "gist"))
    assert blocks and summary_calls
    gists = [b["core_semantic"] for b in blocks]
    if summary_fails:  # the turn still completed; every gist stayed extractive
        assert gist not in gists and all(gists)
    else:
        assert gist in gists and all(len(g) <= 50 for g in gists)
