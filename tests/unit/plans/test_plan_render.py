"""Rendering plans with Graphviz: status colours, Chinese captions, and a clear message without it."""

from __future__ import annotations

import shutil

import pytest

from tools.plans.dot import PlanFormatError, plan_to_dot
from tools.plans.render import STATUS_COLORS, GraphvizMissingError, RenderError, render, styled_dot

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")

PLAN = {
    "planId": "plan_1",
    "userQuery": "帮我生成一份光伏经济测算报告",
    "steps": [
        {
            "seqNo": 0,
            "agentName": "pv_calc",
            "requirement": "光伏经济性测算",
            "status": "completed",
            "dependsOn": [],
            "result": {
                "recordId": "r",
                "output": "IRR 8%",
                "status": "completed",
                "context": {"table": "|{}<>"},
            },
        },
        {
            "seqNo": 1,
            "agentName": "sensitivity",
            "requirement": "敏感性分析 | 电价 {±10%}",
            "status": "interrupted",
            "dependsOn": [0],
            "result": None,
        },
        {
            "seqNo": 2,
            "agentName": "report",
            "requirement": "生成报告",
            "status": "not_started",
            "dependsOn": [1],
            "result": None,
        },
    ],
    "context": {},
}


def test_styled_plan_shows_agent_requirement_and_status_in_its_colour():
    text = styled_dot(plan_to_dot(PLAN))
    assert 'label="0. pv_calc\\n光伏经济性测算\\n[完成]"' in text
    assert (
        f'fillcolor="{STATUS_COLORS["完成"]}"' in text
        and f'fillcolor="{STATUS_COLORS["待用户输入中"]}"' in text
    )
    assert "toolOutput" not in text and "IRR 8%" not in text  # JSON payloads stay out of the picture


@needs_dot
def test_svg_contains_the_chinese_captions_and_colours():
    svg = render(plan_to_dot(PLAN), "svg").decode("utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "光伏经济性测算" in svg and "[待用户输入中]" in svg and "敏感性分析 | 电价 {±10%}" in svg
    assert STATUS_COLORS["完成"] in svg


@needs_dot
def test_png_is_an_image():
    assert render(plan_to_dot(PLAN), "png").startswith(b"\x89PNG\r\n\x1a\n")


@needs_dot
def test_internal_plans_render_too():
    ep = 'digraph G { 1 [label="确认电价" type="confirm" shape=ellipse status="待用户输入中"]; 2 [label="测算" type="function" shape=record toolCode="pv_economics"]; 1 -> 2 }'
    svg = render(ep, "svg").decode("utf-8")
    assert "pv_economics" in svg and "确认电价" in svg and "<ellipse" in svg


def test_missing_graphviz_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(
        GraphvizMissingError, match=r"apt-get install graphviz \(Debian/Ubuntu\) or brew install graphviz"
    ):
        render(plan_to_dot(PLAN), "svg")


def test_bad_input_is_rejected_before_graphviz_runs():
    with pytest.raises(ValueError, match="unsupported format 'pdf'; use 'svg' or 'png'"):
        render(plan_to_dot(PLAN), "pdf")  # type: ignore[arg-type]
    with pytest.raises(PlanFormatError, match="line 1"):
        render("digraph G { 1 [label=", "svg")


def test_graphviz_failure_is_reported(monkeypatch, tmp_path):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: syntax error in line 1' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda name: str(fake))
    with pytest.raises(RenderError, match="Graphviz failed \\(exit 1\\): Error: syntax error in line 1"):
        render(plan_to_dot(PLAN), "svg")


def test_a_hanging_graphviz_is_stopped(monkeypatch, tmp_path):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\nexec sleep 5\n")
    fake.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda name: str(fake))
    with pytest.raises(RenderError, match="Graphviz took longer than 0.3 s"):
        render(plan_to_dot(PLAN), "svg", timeout=0.3)
