"""Smaller findings of our attack run (docs/robustness.md), checked in-process on a real SQLite file."""

from __future__ import annotations

import pytest

from graphs.context import Context, SettingError
from plangraph.runner import PlanRunner, UserFacingError
from tools.plans.dot import plan_to_dot
from tools.plans.render import styled_dot

REQUEST = "帮我生成一份光伏经济测算报告"


@pytest.mark.parametrize(
    ("location", "asked"),
    [("杭州余杭", None), ("Hangzhou", None), ("火星", "没有找到“火星”的光照数据")],
)
def test_a_structured_location_is_read_like_a_typed_one(data_dir, location, asked):
    """Before: {"location": "杭州"} (not the table's "杭州市") asked for the location again, naming nothing."""
    with PlanRunner.open(user_id="u", conversation_id="loc") as runner:
        assert runner.run(REQUEST).interrupt is not None
        outcome = runner.resume({"location": location, "project_type": "工商业", "capacity_kw": 500})
    if asked is None:
        assert outcome.interrupt is None
        assert outcome.plan["steps"][0]["result"]["context"]["inputs"]["location"].startswith(
            ("杭州市", "Hangzhou")
        )
    else:
        assert outcome.interrupt is not None and outcome.interrupt["question"].startswith(asked)
        assert outcome.plan["steps"][0]["status"] == "interrupted"  # nothing recorded as a result


def test_requests_and_answers_lose_control_characters_and_refuse_broken_unicode(data_dir):
    with PlanRunner.open(user_id="u", conversation_id="ctl") as runner:
        assert runner.run_input("帮我\x00生成\x1b报告\x7f\t\n")["messages"][0]["content"] == "帮我生成报告"
        with pytest.raises(UserFacingError, match="第 3 个字符不是有效的 UTF-8"):
            runner.run_input("帮我\udcff")
        runner.run(REQUEST)
        with pytest.raises(UserFacingError, match="不是有效的 UTF-8"):
            runner.resume({"location": "杭州\udcff"})
        with pytest.raises(UserFacingError, match="回答过长"):
            runner.resume("杭州 " * 5000)
        assert runner.snapshot().interrupts  # still waiting, nothing written


@pytest.mark.parametrize("bad", ["a" * 201, "a\nb", "\t", " ", "c\udcff"])
def test_an_id_that_cannot_name_a_conversation_is_refused_before_anything_opens(data_dir, bad):
    with pytest.raises(UserFacingError, match="会话 ID"), PlanRunner.open(conversation_id=bad):
        pass  # pragma: no cover - the open is refused


@pytest.mark.parametrize(
    ("env", "value", "named"),
    [
        ("PLANGRAPH_MAX_REQUEST_CHARS", "8k", "PLANGRAPH_MAX_REQUEST_CHARS='8k' is not a whole number"),
        ("PLANGRAPH_MODEL_TIMEOUT", "abc", "PLANGRAPH_MODEL_TIMEOUT='abc' is not a number"),
        ("PLANGRAPH_MODEL_TIMEOUT", "0", "model_timeout=0.0 is out of range"),
        ("PLANGRAPH_TOKEN_BUDGET", "0", "token_budget=0 is out of range"),
        ("PLANGRAPH_MAX_REQUEST_CHARS", "-1", "max_request_chars=-1 is out of range"),
    ],
)
def test_a_setting_that_is_not_a_usable_number_names_its_variable(monkeypatch, env, value, named):
    monkeypatch.setenv(env, value)
    with pytest.raises(SettingError, match=named.replace("(", r"\(").replace(".", r"\.")):
        Context()


def test_an_empty_setting_is_the_default(monkeypatch):
    monkeypatch.setenv("PLANGRAPH_TOKEN_BUDGET", " ")
    monkeypatch.setenv("PLANGRAPH_MODEL_TIMEOUT", "")
    context = Context()
    assert (context.token_budget, context.model_timeout) == (2000, 60.0)


def test_the_plan_drawing_leaves_out_control_characters_and_shortens_long_steps():
    step = {"seqNo": 0, "agentName": "pv_calc", "status": "not_started", "dependsOn": [], "result": None}
    plan = {
        "planId": "p",
        "userQuery": "q",
        "steps": [{**step, "requirement": "测算\x00\x01" + "很长" * 3000}],
        "context": {},
    }
    drawn = styled_dot(plan_to_dot(plan))
    assert "\x00" not in drawn and "\x01" not in drawn
    assert max(len(line) for line in drawn.splitlines()) < 600


def test_an_overlong_id_gets_a_short_distinct_artifact_folder():
    from nodes.agents._pv import _safe

    long_a, long_b = "🌞" * 150, "🌞" * 149 + "🌝"
    assert len(_safe(long_a).encode()) <= 255 and _safe(long_a) != _safe(long_b)
    assert _safe(long_a) == _safe(long_a)  # the same file names on a re-run
    assert _safe("../..") == "%2E.%2F.."  # short ids keep their readable, contained form


def test_an_overlong_answer_that_bypasses_the_runner_is_asked_again_not_kept(data_dir):
    """LangGraph server / Studio resume ask_user directly; before, a 900 KB answer went into the plan."""
    from langgraph.types import Command

    with PlanRunner.open(user_id="u", conversation_id="direct") as runner:
        asked = runner.run(REQUEST).interrupt
        config = runner.config
        runner.graph.invoke(Command(resume="杭州 " * 5000), config, context=runner.context)
        state = runner.graph.get_state(config)
    question = state.interrupts[0].value["question"]
    assert question.startswith("没有收到有效的回答（回答过长（14999 字，最多 8000 字））。")
    assert question.endswith(asked["question"])
    assert "杭州 杭州" not in str(state.values["plan"]["context"])
