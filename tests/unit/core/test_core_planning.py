"""Plan validation, the plan reducer and offline routing."""

from __future__ import annotations

import pytest
from fake_agents import SPECS, TEMPLATES

from graphs.state import merge_plan
from nodes.planner import candidates
from nodes.routing import best_candidate
from tools.planning import PlanValidationError, make_planning_tools, validate_steps
from tools.plans.status import IllegalTransitionError


def test_unknown_agent_lists_the_valid_names():
    with pytest.raises(
        PlanValidationError, match="unknown agent 'nope'; available: ask_city, boom, meet, use_dep"
    ):
        validate_steps([{"seqNo": 0, "agentName": "nope"}], SPECS)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([], "no steps"),
        (
            [
                {"seqNo": 0, "agentName": "meet", "dependsOn": [1]},
                {"seqNo": 1, "agentName": "meet", "dependsOn": [0]},
            ],
            "cycle: 0 -> 1 -> 0",
        ),
        ([{"seqNo": 0, "agentName": "meet", "dependsOn": [0]}], "cycle: 0 -> 0"),
        ([{"seqNo": 0, "agentName": "meet"}, {"seqNo": 0, "agentName": "boom"}], "used twice"),
        ([{"seqNo": 0, "agentName": "meet", "dependsOn": [7]}], "missing step"),
    ],
)
def test_invalid_plans_are_rejected_with_the_fix(steps, message):
    with pytest.raises(PlanValidationError, match=message):
        validate_steps(steps, SPECS)


def test_create_plan_tool_returns_an_error_tool_message_the_model_can_fix():
    tools = {t.name: t for t in make_planning_tools(SPECS)}
    call = {
        "type": "tool_call",
        "id": "c1",
        "name": "create_plan",
        "args": {"steps": [{"seqNo": 0, "agentName": "x", "requirement": "r"}]},
    }
    msg = tools["create_plan"].invoke(call)
    assert msg.status == "error" and msg.tool_call_id == "c1"
    assert "available: ask_city, boom, meet, use_dep" in msg.content
    ok = tools["create_plan"].invoke(
        {**call, "args": {"steps": [{"seqNo": 0, "agentName": "meet", "requirement": "r"}]}}
    )
    assert ok.status == "success" and '"agentName": "meet"' in ok.content
    assert "ask_city" in tools["list_agents"].invoke({})


def test_merge_plan_patches_steps_by_seqno_and_replaces_on_new_id():
    plan = {
        "planId": "p1",
        "userQuery": "q",
        "context": {"a": 1},
        "steps": [{"seqNo": 0, "status": "not_started"}, {"seqNo": 1, "status": "in_progress"}],
    }
    merged = merge_plan(
        plan, {"planId": "p1", "steps": [{"seqNo": 1, "status": "completed"}], "context": {"b": 2}}
    )
    assert [s["status"] for s in merged["steps"]] == ["not_started", "completed"]
    assert merged["context"] == {"a": 1, "b": 2}
    assert merge_plan(merged, {**plan, "planId": "p2"})["planId"] == "p2"
    assert merge_plan(merged, None) is None


def test_merge_plan_refuses_a_step_status_change_the_status_machine_forbids():
    plan = {"planId": "p1", "userQuery": "q", "context": {}, "steps": [{"seqNo": 0, "status": "completed"}]}
    with pytest.raises(IllegalTransitionError, match="完成 → 运行中 is not an allowed transition"):
        merge_plan(plan, {"planId": "p1", "steps": [{"seqNo": 0, "status": "in_progress"}]})
    waiting = {**plan, "steps": [{"seqNo": 0, "status": "interrupted"}]}
    with pytest.raises(
        IllegalTransitionError
    ):  # an answered question re-opens the step; it never completes it
        merge_plan(waiting, {"planId": "p1", "steps": [{"seqNo": 0, "status": "completed"}]})
    assert merge_plan(waiting, {"planId": "p1", "steps": [{"seqNo": 0, "status": "not_started"}]})


def test_routing_prefers_the_matching_template_and_returns_none_for_nonsense():
    options = candidates(SPECS, TEMPLATES)
    assert best_candidate("三个并行会合", options).name == "三方会合"
    assert best_candidate("查询城市", options).name in ("城市汇总", "ask_city")
    assert best_candidate("xyzzy", options) is None
