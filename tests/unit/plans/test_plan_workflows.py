"""Workflow templates: the shipped .dot files, user folders, validation errors, instantiation."""

from __future__ import annotations

import pytest

from tools.plans.workflows import TEMPLATES_ENV, TemplateError, load_templates, template_to_plan

AGENTS = {"pv_calc", "sensitivity", "reverse_opt", "report", "knowledge"}

USER_WORKFLOW = """digraph G {
  name="户用光伏测算"; description="户用屋顶光伏的快速测算"; examples="我家屋顶能装多少光伏|户用光伏划算吗";
  0 [label="户用光伏测算" type="agent" agentName="pv_calc"];
}
"""


@pytest.fixture
def no_user_dir(monkeypatch):
    monkeypatch.delenv(TEMPLATES_ENV, raising=False)


def test_shipped_workflows_chain_the_right_agents(no_user_dir):
    templates = {t.name: t for t in load_templates(agents=AGENTS)}
    chains = {name: [(s["agentName"], s["dependsOn"]) for s in t.steps] for name, t in templates.items()}
    assert chains["光伏测算报告"] == [("pv_calc", []), ("sensitivity", [0]), ("report", [0, 1])]
    assert chains["敏感性分析报告"] == [("sensitivity", []), ("report", [0])]
    assert chains["逆向寻优"] == [("pv_calc", []), ("reverse_opt", [0])]
    assert chains["政策问答"] == [("knowledge", [])]
    assert all(t.description and len(t.examples) >= 2 for t in templates.values())


def test_a_dropped_in_file_adds_a_workflow_and_can_replace_a_shipped_one(tmp_path):
    (tmp_path / "home.dot").write_text(USER_WORKFLOW, encoding="utf-8")
    (tmp_path / "override.dot").write_text(
        USER_WORKFLOW.replace("户用光伏测算", "政策问答", 1).replace(
            'agentName="pv_calc"', 'agentName="knowledge"'
        ),
        encoding="utf-8",
    )
    (tmp_path / "notes.txt").write_text("not a template", encoding="utf-8")
    templates = {t.name: t for t in load_templates(agents=AGENTS, extra=str(tmp_path))}
    assert templates["户用光伏测算"].examples == ("我家屋顶能装多少光伏", "户用光伏划算吗")
    assert templates["政策问答"].path == tmp_path / "override.dot"
    assert "光伏测算报告" in templates


def test_name_defaults_to_the_file_name(tmp_path):
    (tmp_path / "quick_calc.dot").write_text(
        USER_WORKFLOW.replace('name="户用光伏测算"; ', ""), encoding="utf-8"
    )
    assert [t.name for t in load_templates([tmp_path], agents=AGENTS)] == ["quick_calc"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            USER_WORKFLOW.replace("pv_calc", "solar_calc"),
            "node 0: unknown agent 'solar_calc'; available: knowledge, pv_calc, report",
        ),
        (USER_WORKFLOW.replace('description="户用屋顶光伏的快速测算"; ', ""), "missing description"),
        (USER_WORKFLOW.replace("];", "]; 0 -> 0;"), "cycle: 0 -> 0"),
        (USER_WORKFLOW.replace("];", "]", 1).replace("}", ""), "invalid DOT"),
        (
            USER_WORKFLOW.replace('agentName="pv_calc"', 'agentName="pv_calc" status="完成"'),
            "templates describe steps only",
        ),
    ],
)
def test_a_bad_template_names_its_file_and_the_problem(tmp_path, text, expected):
    path = tmp_path / "bad.dot"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TemplateError) as err:
        load_templates([tmp_path], agents=AGENTS)
    assert str(err.value).startswith(f"{path}: ") and expected in str(err.value)


def test_two_files_with_one_name_in_a_folder_are_rejected(tmp_path):
    (tmp_path / "a.dot").write_text(USER_WORKFLOW, encoding="utf-8")
    (tmp_path / "b.dot").write_text(USER_WORKFLOW, encoding="utf-8")
    with pytest.raises(TemplateError, match=r"b\.dot: workflow name '户用光伏测算' is also used by .*a\.dot"):
        load_templates([tmp_path], agents=AGENTS)


def test_a_missing_templates_folder_is_reported(tmp_path):
    with pytest.raises(TemplateError, match="PLANGRAPH_TEMPLATES_DIR names .*nope, which is not a folder"):
        load_templates(agents=AGENTS, extra=str(tmp_path / "nope"))


def test_template_becomes_a_fresh_plan(no_user_dir):
    template = next(t for t in load_templates(agents=AGENTS) if t.name == "光伏测算报告")
    plan = template_to_plan(template, "帮我生成一份光伏经济测算报告", "plan_7")
    assert plan["planId"] == "plan_7" and plan["userQuery"] == "帮我生成一份光伏经济测算报告"
    assert plan["context"] == {}
    assert [(s["agentName"], s["status"], s["result"], s["dependsOn"]) for s in plan["steps"]] == [
        ("pv_calc", "not_started", None, []),
        ("sensitivity", "not_started", None, [0]),
        ("report", "not_started", None, [0, 1]),
    ]
    plan["steps"][2]["dependsOn"].append(9)
    assert template.steps[2]["dependsOn"] == [0, 1]  # the template is not shared with plans
