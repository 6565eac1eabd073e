"""The plan-node status machine: labels, step statuses, and who may drive which transition."""

from __future__ import annotations

import pytest

from tools.plans.status import (
    STATUS_LABELS,
    TRANSITIONS,
    IllegalTransitionError,
    allowed_next,
    check_step_transition,
    label_of,
    step_labels,
    step_status_of,
    transition,
)


def test_every_label_maps_to_a_step_status_and_back():
    assert {label: step_status_of(label) for label in STATUS_LABELS} == {
        "待初始化": "not_started",
        "待运行": "not_started",
        "运行中": "in_progress",
        "待用户输入中": "interrupted",
        "完成": "completed",
        "失败": "failed",
    }
    assert label_of("not_started", ready=False) == "待初始化"
    assert [label_of(step_status_of(label), ready=label != "待初始化") for label in STATUS_LABELS] == list(
        STATUS_LABELS
    )


def test_the_happy_path_with_a_question_is_allowed_step_by_step():
    path = [
        ("待初始化", "待运行", "model"),
        ("待运行", "运行中", "framework"),
        ("运行中", "待用户输入中", "model"),
        ("待用户输入中", "待运行", "framework"),
        ("待运行", "运行中", "framework"),
        ("运行中", "完成", "framework"),
    ]
    assert [transition(a, b, actor) for a, b, actor in path] == [b for _, b, _ in path]


def test_the_model_cannot_make_framework_transitions_and_is_told_what_it_may_do():
    with pytest.raises(IllegalTransitionError) as err:
        transition("待运行", "运行中", "model")
    assert "driven by the framework, not the model" in str(err.value)
    assert err.value.allowed == ("待用户输入中",)
    assert "the model may move 待运行 to: 待用户输入中" in str(err.value)


def test_final_statuses_have_no_way_out():
    for final in ("完成", "失败"):
        assert allowed_next(final) == ()
        with pytest.raises(IllegalTransitionError, match="is not an allowed transition"):
            transition(final, "待运行", "framework")


def test_unknown_status_lists_the_valid_ones():
    with pytest.raises(
        IllegalTransitionError, match="unknown status 'done'; valid statuses: 待初始化, 待运行"
    ):
        transition("运行中", "done", "framework")  # type: ignore[arg-type]


def test_every_transition_has_exactly_one_driver_and_both_drivers_are_used():
    assert set(TRANSITIONS.values()) == {"model", "framework"}
    assert all(a != b and a in STATUS_LABELS and b in STATUS_LABELS for a, b in TRANSITIONS)


def test_plan_labels_follow_dependency_readiness():
    steps = [
        {"seqNo": 0, "status": "completed", "dependsOn": []},
        {"seqNo": 1, "status": "not_started", "dependsOn": [0]},
        {"seqNo": 2, "status": "not_started", "dependsOn": [0, 1]},
        {"seqNo": 3, "status": "interrupted", "dependsOn": []},
    ]
    plan = {"planId": "p", "userQuery": "", "steps": steps, "context": {}}
    assert step_labels(plan) == {0: "完成", 1: "待运行", 2: "待初始化", 3: "待用户输入中"}  # type: ignore[arg-type]


def test_step_status_changes_the_executor_makes_are_legal_and_reversals_are_not():
    legal = [
        ("not_started", "in_progress"),
        ("in_progress", "completed"),
        ("in_progress", "failed"),
        ("not_started", "failed"),
        ("interrupted", "not_started"),
    ]
    for current, new in legal:
        assert check_step_transition(current, new, "framework") == new
    assert check_step_transition("in_progress", "interrupted", "model") == "interrupted"
    with pytest.raises(IllegalTransitionError):
        check_step_transition("completed", "in_progress", "framework")
