"""Model endpoint faults against a real OpenAI-compatible server on 127.0.0.1.

Extends tests/integration/scenarios/test_model_mode.py (unknown agent once, malformed JSON once,
unknown tool, HTTP 500 in the planner): here every fault is bounded (the number of requests is
counted), the user gets a clear message, the checkpoint keeps the work, and once the endpoint
recovers `resume()` finishes the plan without re-running finished steps.
"""

from __future__ import annotations

import json

import pytest

from plangraph.runner import PlanRunner, UserFacingError
from tests.support.openai_server import (
    ScriptedOpenAIServer,
    fault_delay,
    fault_status,
    fault_truncated_stream,
    reply_malformed_tool_call,
    reply_text,
    reply_tool_call,
)

KNOWLEDGE_PLAN = {
    "steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答余电上网电价政策", "dependsOn": []}]
}
QUESTION = "分布式光伏余电上网电价怎么定？"
# One model call is one HTTP request (max_retries=0); the planner node retries it 3 times (RETRY_POLICY).
ATTEMPTS_PER_MODEL_CALL = 3


def _is_planner(body) -> bool:
    return any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))


def _healthy(body):
    """A model that plans one knowledge step and answers everything else with cited text."""
    if _is_planner(body):
        return reply_tool_call("create_plan", KNOWLEDGE_PLAN)
    return reply_text("根据资料[1]，余电上网按当地燃煤基准价结算。")


def _steps(runner):
    plan = runner.current_plan()
    return [(s["agentName"], s["status"]) for s in plan["steps"]] if plan else None


def test_http_500_is_retried_a_bounded_number_of_times_then_resume_finishes(model_env, data_dir):
    with ScriptedOpenAIServer(
        [fault_status(500, retry_after=0.01)] * ATTEMPTS_PER_MODEL_CALL, responder=_healthy
    ) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="f500") as runner:
            with pytest.raises(UserFacingError, match="模型服务暂时不可用") as failure:
                runner.run(QUESTION)
            assert "plangraph resume --conversation f500" in str(failure.value)
            assert len(server.requests) == ATTEMPTS_PER_MODEL_CALL  # bounded: no retry storm
            state = runner.graph.get_state(runner.config)
            assert state.next == ("planner",) and state.values["messages"][-1].content == QUESTION
            done = runner.resume()  # the endpoint is healthy again (script used up → responder)
        assert done.plan["steps"][0]["status"] == "completed"
        assert "余电上网" in done.summary


def test_timeout_is_a_clear_error_and_the_request_is_kept(model_env, data_dir):
    """A call cut at PLANGRAPH_MODEL_TIMEOUT is not retried (issue 12 item 3): planning falls back to the
    offline planner and says so; the knowledge step's cut call stops the run, resumable at that step."""
    slow = [fault_delay(3.0)] * 2
    with ScriptedOpenAIServer(slow, responder=_healthy, strict=False) as server:
        model_env(server, timeout=0.3)
        with PlanRunner.open(user_id="u", conversation_id="ftime") as runner:
            with pytest.raises(UserFacingError, match="模型服务.*0.3 秒内没有答完.*PLANGRAPH_MODEL_TIMEOUT"):
                runner.run(QUESTION)
            assert len(server.requests) == 2  # one planner call, one knowledge call: no retry of a cut call
            assert _steps(runner) == [("knowledge", "in_progress")]
            assert "已改用离线规划" in runner.current_plan()["context"]["notice"]
            done = runner.resume()  # the endpoint answers in time again
    assert done.plan["steps"][0]["status"] == "completed"


def test_truncated_stream_is_retried_and_the_run_completes(model_env, data_dir):
    with ScriptedOpenAIServer([fault_truncated_stream("我先看看可用的")], responder=_healthy) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="ftrunc") as runner:
            outcome = runner.run(QUESTION)
        planner_calls = [r for r in server.requests if _is_planner(r)]
    assert len(planner_calls) == 2  # the cut-off reply and its retry
    assert outcome.plan["steps"][0]["status"] == "completed"


def test_malformed_tool_call_json_every_round_fails_clearly(model_env, data_dir):
    bad = [reply_malformed_tool_call("create_plan", '{"steps": [{"seqNo": 0,')] * 4
    # after planning, the offline plan's knowledge step, its reflection and the summary use the model
    with ScriptedOpenAIServer(bad, responder=lambda request: reply_text("按燃煤基准价结算[1]。")) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="fjson") as runner:
            outcome = runner.run(QUESTION)
            assert runner.graph.get_state(runner.config).next == ()
        planning = [r for r in server.requests if "create_plan" in json.dumps(r.get("tools", []))]
        assert len(planning) == 4  # MAX_PLAN_ROUNDS, then the offline plan
    # the offline planner plans the request instead, and the user is told why
    assert outcome.plan is not None and [s["agentName"] for s in outcome.plan["steps"]] == ["knowledge"]
    assert "没能生成可执行的计划" in outcome.summary and "not valid JSON" in outcome.summary
    assert "已改用离线规划" in outcome.summary


def test_plan_with_an_unknown_agent_every_round_falls_back_and_says_why(model_env, data_dir):
    bad_plan = {"steps": [{"seqNo": 0, "agentName": "policy_bot", "requirement": "x", "dependsOn": []}]}
    script = [reply_tool_call("create_plan", bad_plan)] * 4
    with ScriptedOpenAIServer(
        script, responder=lambda request: reply_text("按燃煤基准价结算[1]。")
    ) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="fagent") as runner:
            outcome = runner.run(QUESTION)
        planning = [r for r in server.requests if "create_plan" in json.dumps(r.get("tools", []))]
        assert len(planning) == 4  # four planning rounds, then the offline plan
    assert outcome.plan is not None and [s["agentName"] for s in outcome.plan["steps"]] == ["knowledge"]
    assert "policy_bot" in outcome.summary and "knowledge" in outcome.summary  # names the valid agents


def test_endpoint_dying_inside_a_step_keeps_the_plan_and_resume_finishes_it(model_env, data_dir):
    """The planner succeeds, the knowledge step's model call fails, the step is retried then the
    run stops with the step still in progress; after recovery only that step and the finalizer run."""
    script = [reply_tool_call("create_plan", KNOWLEDGE_PLAN)] + [fault_status(503, retry_after=0.01)] * 3
    with ScriptedOpenAIServer(script, responder=_healthy) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="fstep") as runner:
            with pytest.raises(UserFacingError, match="模型服务暂时不可用"):
                runner.run(QUESTION)
            assert len(server.requests) == 1 + 3
            assert _steps(runner) == [("knowledge", "in_progress")]
            done = runner.resume()
        after = server.requests[4:]
    assert done.plan["steps"][0]["status"] == "completed"
    assert not any(_is_planner(r) for r in after)  # the plan was not made again
    knowledge_calls = [r for r in after if "知识助手" in r["messages"][0]["content"]]
    # The failed step ran once more, and nothing before it did: one turn of its tool loop (the model
    # answers without searching), then its offline path's one answer call.
    assert [bool(r.get("tools")) for r in knowledge_calls] == [True, False]


@pytest.mark.parametrize(
    ("step", "named"),
    [
        ({"seqNo": 2**70, "agentName": "knowledge", "requirement": "x"}, "number the steps"),
        ({"seqNo": -1, "agentName": "knowledge", "requirement": "x"}, "number the steps"),
        ({"seqNo": 0, "agentName": "knowledge", "requirement": "政" * 5_000}, "5000 characters"),
    ],
    ids=["seqNo 2**70", "seqNo -1", "requirement of 5000 chars"],
)
def test_model_plan_out_of_bounds_is_a_validation_error_every_round(model_env, data_dir, step, named):
    """Issue 12 items 9 and 11: before, 2**70 was a TypeError with the plan left "running", −1 shared
    the planner's stream index, and an 800k-character requirement was accepted into the state."""
    bad_plan = {"steps": [{**step, "dependsOn": []}]}
    script = [reply_tool_call("create_plan", bad_plan)] * 4
    with ScriptedOpenAIServer(
        script, responder=lambda request: reply_text("按燃煤基准价结算[1]。")
    ) as server:
        model_env(server, timeout=60)  # 5000 characters stream as ~1,300 events: slow under load
        with PlanRunner.open(user_id="u", conversation_id="fbounds") as runner:
            outcome = runner.run(QUESTION)
        planning = [r for r in server.requests if "create_plan" in json.dumps(r.get("tools", []))]
        assert len(planning) == 4  # the model was told each time and tried again
        feedback = [m for m in planning[1]["messages"] if m.get("role") == "tool"]
        assert feedback and named in feedback[-1]["content"]
    # then the offline plan, and the user is told why
    assert outcome.plan is not None and [s["seqNo"] for s in outcome.plan["steps"]] == [0]
    assert "没能生成可执行的计划" in outcome.summary and named in outcome.summary
