"""Each agent's internal plan (EP): the shipped DOT file, live statuses in a step, questions, failures."""

from __future__ import annotations

import pytest

import nodes.agents as registry
from nodes.agents import get_agent
from nodes.kit.ep import EPTracker
from nodes.kit.ep_plans import AGENT_PLANS_DIR, AgentPlanError, internal_plan_of, load_internal_plan
from nodes.kit.registry import AgentSpec
from tests.support.services import recorded_call
from tests.unit.ep.ep_helpers import S1_ANSWER, Conversation
from tools.plans.dot import dot_to_internal_plan

AGENTS = ("pv_calc", "sensitivity", "reverse_opt", "report", "knowledge")
# The tool each agent records with StepContext.record_tool_call (read from its module).
RECORDS = {
    "pv_calc": "pv_economics",
    "sensitivity": "pv_sensitivity",
    "reverse_opt": "pv_reverse",
    "report": "pv_report",
    "knowledge": "kb_search",
}


def _statuses(ep_dot: str) -> dict[str, str]:
    return {n.id: n.status for n in dot_to_internal_plan(ep_dot).nodes}


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agent_ships_a_valid_internal_plan_naming_the_tool_it_records(agent):
    spec = get_agent(agent)
    plan = internal_plan_of(spec)
    assert plan is not None
    assert (
        dot_to_internal_plan((AGENT_PLANS_DIR / f"{agent}.dot").read_text(encoding="utf-8")).nodes
        == plan.nodes
    )
    tool_codes = {t for n in plan.nodes for t in n.tools()}
    assert tool_codes == {RECORDS[agent]} and tool_codes <= set(spec.tools)
    assert [n.type for n in plan.nodes] == ["confirm", "function"]
    assert all(n.status == "待初始化" for n in plan.nodes)


def test_an_s1_like_run_ends_with_every_node_of_every_agent_completed(data_dir):
    conv = Conversation(data_dir)
    calc = conv.run("pv_calc", "帮我生成一份光伏经济测算报告", answers=[S1_ANSWER])
    sens = conv.run("sensitivity", "对测算方案进行敏感性分析", seq=1, deps={0: calc})
    report = conv.run("report", "生成测算报告", seq=2, deps={0: calc, 1: sens})
    reverse = conv.run("reverse_opt", "造价降到多少才能让IRR达到20%", seq=3, deps={0: calc})
    know = conv.run("knowledge", "分布式光伏并网流程是怎样的？", seq=4)
    for agent, result in zip(AGENTS, (calc, sens, reverse, report, know), strict=True):
        assert result["status"] == "completed", agent
        ep = dot_to_internal_plan(result["context"]["ep"])
        assert {n.status for n in ep.nodes} == {"完成"}, agent
        tool_node = next(n for n in ep.nodes if n.type == "function")
        args, _ = recorded_call(conv.memory(agent), tool_node.tool_code)  # the EP names the recorded call
        assert tool_node.tool_input.startswith("{") and tool_node.tool_output
        assert tool_node.tool_output[:20] == result["output"][:20]
    assert dot_to_internal_plan(calc["context"]["ep"]).id == "plan-1:0"


def test_interrupted_pv_calc_waits_on_its_confirm_node_and_completes_after_the_answer(data_dir):
    conv = Conversation(data_dir)
    asked = conv.run("pv_calc", "帮我生成一份光伏经济测算报告")
    assert asked["status"] == "interrupted"
    ep = dot_to_internal_plan(asked["context"]["ep"])
    assert _statuses(asked["context"]["ep"]) == {"1": "待用户输入中", "2": "待初始化"}
    assert ep.node("1").question == asked["output"] and "装机容量" in ep.node("1").question
    assert asked["context"]["missing"] == ["location", "project_type", "capacity_kw"]

    done = conv.run("pv_calc", "帮我生成一份光伏经济测算报告", answers=[S1_ANSWER], previous=asked)
    assert done["status"] == "completed"
    ep = dot_to_internal_plan(done["context"]["ep"])
    assert _statuses(done["context"]["ep"]) == {"1": "完成", "2": "完成"}
    assert ep.node("1").answer == S1_ANSWER and ep.node("1").question == asked["output"]
    assert '"capacity_kw": 500.0' in ep.node("2").tool_input


def test_an_incomplete_answer_asks_again_on_the_same_node(data_dir):
    conv = Conversation(data_dir)
    asked = conv.run("pv_calc", "帮我进行光伏测算")
    again = conv.run("pv_calc", "帮我进行光伏测算", answers=["地点是杭州余杭区"], previous=asked)
    assert again["status"] == "interrupted"
    ep = dot_to_internal_plan(again["context"]["ep"])
    assert ep.node("1").status == "待用户输入中" and ep.node("1").answer == "地点是杭州余杭区"
    assert ep.node("1").question == again["output"] != asked["output"]


def _tracker(text: str) -> EPTracker:
    return EPTracker.start(dot_to_internal_plan(text), ep_id="p:0", tools=("a", "b", "c"), agent="t")


def test_a_multifunction_node_completes_once_all_its_tools_ran():
    ep = _tracker(
        'digraph G { 1 [type="multiFunction" toolCode="a,b"]; 2 [type="function" toolCode="c"]; 1 -> 2; }'
    )
    assert [n.status for n in ep.plan.nodes] == ["待运行", "待初始化"]
    ep.tool_recorded("a", {"x": 1}, "A done")
    assert [n.status for n in ep.plan.nodes] == ["运行中", "待初始化"]
    ep.tool_recorded("b", {}, "B done")
    assert [n.status for n in ep.plan.nodes] == ["完成", "待运行"]
    assert ep.plan.node("1").tool_output == "a: A done\nb: B done"


def test_a_failed_step_marks_the_running_node_and_skips_what_waited_on_it():
    ep = _tracker(
        'digraph G { 1 [type="confirm"]; 2 [type="function" toolCode="a"]; 3 [type="function" toolCode="b"]; '
        "1 -> 2; 2 -> 3; }"
    )
    assert ep.plan.node("1").status == "运行中"
    ep.fail()
    assert [n.status for n in ep.plan.nodes] == ["失败", "失败", "失败"]


def test_long_tool_values_are_shortened_on_the_node():
    ep = _tracker('digraph G { 1 [type="function" toolCode="a"]; }')
    ep.tool_recorded("a", {"text": "长" * 1000}, "出" * 1000)
    node = ep.plan.node("1")
    assert len(node.tool_input) <= 160 and len(node.tool_output) == 160 and node.tool_output.endswith("…")


def _spec_with_plan(tmp_path, body: str, tools=("pv_economics",)) -> AgentSpec:
    path = tmp_path / "my_agent.dot"
    path.write_text(body, encoding="utf-8")
    load_internal_plan.cache_clear()
    return AgentSpec("my_agent", "测试", run=lambda ctx: None, tools=tools, internal_plan=path)  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'digraph G { 1 [type="function" toolCode="pv_magic"]; }',
            "node 1: unknown tool 'pv_magic'; my_agent records: pv_economics",
        ),
        ('digraph G { 1 [type="function"]; }', "function node without toolCode"),
        ('digraph G { 1 [type="function" toolCode="pv_economics" status="完成"]; }', "describes nodes only"),
        ('digraph G { 1 [type="agent"]; }', "unknown node type 'agent'"),
        ('digraph G { 1 [type="confirm"]; 2 [type="confirm"]; 1 -> 2; 2 -> 1; }', "cycle"),
        ("digraph G { 1 [type=", "invalid DOT"),
    ],
)
def test_a_bad_internal_plan_file_is_a_clear_error_naming_the_file(tmp_path, body, message):
    spec = _spec_with_plan(tmp_path, body)
    with pytest.raises(AgentPlanError) as err:
        internal_plan_of(spec)
    assert str(err.value).startswith(str(tmp_path / "my_agent.dot")) and message in str(err.value)


def test_the_registry_refuses_to_load_an_agent_with_an_unknown_tool_in_its_plan(tmp_path, monkeypatch):
    spec = _spec_with_plan(tmp_path, 'digraph G { 1 [type="function" toolCode="pv_magic"]; }')
    module = type(registry)("ep_bad_agent")
    module.AGENT = spec  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "ep_bad_agent", module)
    monkeypatch.setattr(registry, "AGENT_MODULES", (*registry.AGENT_MODULES, "ep_bad_agent"))
    registry.agents.cache_clear()
    try:
        with pytest.raises(AgentPlanError, match="my_agent.dot: node 1: unknown tool 'pv_magic'"):
            registry.agents()
    finally:
        registry.agents.cache_clear()
        load_internal_plan.cache_clear()
