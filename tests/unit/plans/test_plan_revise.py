"""Model revisions of the agent-level plan: add, drop, reorder; rejected answers; the bound; finished steps."""

from __future__ import annotations

import copy

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from graphs.state import merge_plan
from nodes.agents import agents
from nodes.revise_plan import REVISE_ATTEMPTS, _patch, review
from tools.contracts import AgentExecResult, ExecutionPlan, PlanStep
from tools.faults import ModelFaultError
from tools.plans.dot import dot_to_plan, plan_to_dot
from tools.plans.reflect import PlanUpdateError
from tools.plans.revise import parse_plan_update, prompt_dot, retired_steps, to_review

SPECS = agents()
DONE = AgentExecResult(
    recordId="r0", output="IRR 8.2%，回收期 7.1 年。", status="completed", context={"irr": 0.082}
)


def step(seq: int, agent: str, deps: list[int], status: str = "not_started") -> PlanStep:
    result = DONE if status == "completed" else None
    return PlanStep(
        seqNo=seq,
        agentName=agent,
        requirement=f"{agent} 的要求",
        status=status,
        dependsOn=deps,
        result=result,
    )  # type: ignore[typeddict-item]


def plan() -> ExecutionPlan:
    """pv_calc done; sensitivity and report still to run, in that order."""
    return ExecutionPlan(
        planId="plan_a",
        userQuery="帮我测算杭州500kW工商业光伏并出报告",
        steps=[step(0, "pv_calc", [], "completed"), step(1, "sensitivity", [0]), step(2, "report", [0, 1])],
        context={"lang": "zh"},
    )


def answer(steps: list[PlanStep], note: str = "已有测算结果，调整后续步骤。", plan_id: str = "plan_a") -> str:
    proposed = ExecutionPlan(planId=plan_id, userQuery="", steps=steps, context={})
    return f"@epupdatelog@\n{note}\n@epupdatelog@\n@EP@\n*id={plan_id}\n*graph={prompt_dot(proposed)}@EP@"


def fake(*texts: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter(AIMessage(content=t) for t in texts))


def test_drop_a_step_and_rewire_its_dependant():
    current = plan()
    revision = parse_plan_update(answer([current["steps"][0], step(2, "report", [0])]), current, SPECS)
    assert revision.dropped == (1,) and revision.rewired == (2,) and revision.added == ()
    assert [s["seqNo"] for s in revision.steps] == [0, 2]
    assert revision.steps[0] is current["steps"][0]  # the finished step is the plan's own, result and all


def test_add_a_step_and_reorder():
    current = plan()
    steps = [
        current["steps"][0],
        step(1, "sensitivity", [0, 3]),
        step(2, "report", [1]),
        step(3, "reverse_opt", [0]),
    ]
    revision = parse_plan_update(answer(steps), current, SPECS)
    assert revision.added == (3,) and revision.rewired == (1, 2) and revision.dropped == ()
    merged = merge_plan(current, _patch(current, {"after": [0], "status": "applied"}, revision))
    assert merged is not None
    assert [(s["seqNo"], s["agentName"], s["dependsOn"]) for s in merged["steps"]] == [
        (0, "pv_calc", []),
        (1, "sensitivity", [0, 3]),
        (2, "report", [1]),
        (3, "reverse_opt", [0]),
    ]
    assert merged["steps"][0]["result"] == DONE
    assert merged["context"]["requirements_by"] == "model"


def test_the_same_plan_back_is_unchanged():
    current = plan()
    revision = parse_plan_update(answer(current["steps"], note="无需调整"), current, SPECS)
    assert not revision.changed and revision.note == "无需调整"


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        (
            [step(1, "sensitivity", []), step(2, "report", [1])],
            "node 0 has started (completed) and cannot be removed",
        ),
        (
            [
                {**step(0, "pv_calc", [], "completed"), "requirement": "改过的要求"},
                step(1, "sensitivity", [0]),
            ],
            "node 0 has started and cannot change its label",
        ),
        (
            [step(0, "pv_calc", [], "completed"), step(1, "weather", [0])],
            "unknown agent 'weather'; available: ",
        ),
        (
            [step(0, "pv_calc", [], "completed"), step(1, "sensitivity", [0, 7])],
            "edge 7 -> 1: node 7 is not declared",
        ),
        (
            [step(0, "pv_calc", [], "completed"), step(1, "sensitivity", [2]), step(2, "report", [1])],
            "cycle",
        ),
        (
            [step(0, "pv_calc", [], "completed"), step(1, "sensitivity", [0], "completed")],
            "node 1: only the framework sets a step's status",
        ),
        ([step(0, "pv_calc", [], "completed"), step(70, "report", [0])], "below 64"),
    ],
)
def test_invalid_revisions_are_rejected_with_what_to_fix(steps, problem):
    with pytest.raises(PlanUpdateError) as caught:
        parse_plan_update(answer(steps), plan(), SPECS)
    assert problem in str(caught.value)


def test_a_wrong_plan_id_and_a_reused_dropped_number_are_rejected():
    current = plan()
    with pytest.raises(PlanUpdateError, match="write \\*id=plan_a"):
        parse_plan_update(answer(current["steps"], plan_id="plan_b"), current, SPECS)
    with pytest.raises(PlanUpdateError, match="step number 3 was dropped earlier"):
        parse_plan_update(answer([*current["steps"], step(3, "report", [0])]), current, SPECS, retired={3})


def test_review_retries_once_with_the_error_then_applies():
    current = plan()
    good = answer([current["steps"][0], step(2, "report", [0])], note="敏感性分析不再需要。")
    entry, revision = review(fake("好的，我来调整。", good), current, [0], SPECS)
    assert revision is not None and revision.dropped == (1,)
    assert entry["status"] == "applied" and entry["dropped"] == [1] and entry["rewired"] == [2]
    assert entry["note"] == "敏感性分析不再需要。" and "@epupdatelog@ block is missing" in entry["errors"][0]


def test_review_rejects_after_the_attempts_and_the_plan_stays_as_it_was():
    current = plan()
    before = copy.deepcopy(current)
    bad = answer([step(1, "sensitivity", [])])  # drops the finished step
    entry, revision = review(fake(*[bad] * REVISE_ATTEMPTS), current, [0], SPECS)
    assert revision is None and entry["status"] == "rejected" and len(entry["errors"]) == REVISE_ATTEMPTS
    assert "cannot be removed" in entry["note"]
    merged = merge_plan(current, _patch(current, entry, revision))
    assert merged is not None and merged["steps"] == before["steps"]
    assert merged["context"]["revisions"] == [entry]


def test_a_failing_model_call_is_a_rejected_review():
    class Broken(GenericFakeChatModel):
        def _generate(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            raise ModelFaultError("模型服务返回了空的回答")

    entry, revision = review(Broken(messages=iter([])), plan(), [0], SPECS)
    assert revision is None and entry["status"] == "rejected" and "空的回答" in entry["note"]


def test_the_bound_stops_reviews_and_each_completed_step_is_reviewed_once():
    current = plan()
    assert to_review(current, bound=2) == [0]
    assert to_review(current, bound=0) == []
    current["context"]["revisions"] = [{"after": [0], "status": "unchanged"}]
    assert to_review(current, bound=2) == []  # step 0 was looked at already
    current["steps"][1] = step(1, "sensitivity", [0], "completed")
    assert to_review(current, bound=2) == [1]
    current["context"]["revisions"] += [
        {"after": [], "status": "applied", "dropped": [5]},
        {"after": [], "status": "applied"},
    ]
    assert to_review(current, bound=2) == []  # two revisions applied: no more model calls
    assert retired_steps(current) == {5}


def test_finished_steps_cannot_be_dropped_by_any_patch():
    current = plan()
    with pytest.raises(ValueError, match="step 0 is completed; only steps that have not started"):
        merge_plan(current, {"planId": "plan_a", "dropSteps": [0]})


def test_the_dot_carries_the_log_and_reads_back():
    current = plan()
    entry = {"after": [0], "status": "applied", "note": "敏感性分析不再需要。", "dropped": [1]}
    current["context"]["revisions"] = [entry, {"after": [2], "status": "rejected", "note": "bad"}]
    text = plan_to_dot(current)
    assert (
        'epupdatelog="1. 步骤 0 完成后（已调整：删除 1）：敏感性分析不再需要。\\n2. 步骤 2 完成后（未采用）：bad"'
        in text
    )
    assert dot_to_plan(text) == current
    assert "epupdatelog" not in plan_to_dot(plan())  # no revisions, no attribute: offline DOT as before


@pytest.mark.parametrize(
    ("model", "bound", "goto"),
    [("", 2, ["sensitivity"]), ("scripted", 0, ["sensitivity"]), ("scripted", 2, "revise_plan")],
)
def test_the_executor_reviews_only_with_a_model_and_revisions_left(model, bound, goto, tmp_path):
    from langgraph.runtime import Runtime

    from graphs.context import Context
    from nodes.executor import executor

    runtime = Runtime(
        context=Context(model=model, plan_revisions=bound, conversation_id="c", data_dir=str(tmp_path))
    )
    command = executor({"messages": [], "plan": plan()}, runtime)  # type: ignore[arg-type]
    sent = command.goto if isinstance(command.goto, str) else [s.node for s in command.goto]
    assert sent == goto
