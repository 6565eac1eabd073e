"""Plans as DOT: round trips at both levels, the seed's own example, and clear errors."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.plans.dot import (
    InternalNode,
    InternalPlan,
    PlanFormatError,
    dot_to_internal_plan,
    dot_to_plan,
    internal_plan_to_dot,
    plan_to_dot,
)
from tools.plans.status import STATUS_LABELS

AGENTS = {"pv_calc", "sensitivity", "reverse_opt", "report", "knowledge"}

SEED_EP = """digraph G {   1 [label = "节点A" shape=record type="function" status="待初始化" toolCode="functionA"
toolInput="xx" toolOutput="xx" question=""];   2 [label = "节点B" shape=ellipse type="confirm" status="待初始化"
question="xx" answer="xx"];   3 [label = "节点C" shape=record type="function" toolCode="functionC"  status="待初始化"
toolInput="xx" toolOutput="xx" question="xx"];   4 [label = "节点D" shape=ellipse type="confirm" status="待初始化"
component="xx" payload="xx" question="请查收xx"  answer="xx"];   1 -> 2; 2 -> 3; 3 -> 4;}"""


def pv_plan() -> dict:
    return {
        "planId": "plan_1",
        "userQuery": '帮我测算"杭州市余杭区"的光伏项目\\n并出报告',
        "steps": [
            {
                "seqNo": 0,
                "agentName": "pv_calc",
                "requirement": "光伏经济性测算：投资、IRR、回收期",
                "status": "completed",
                "dependsOn": [],
                "result": {
                    "recordId": "r0",
                    "output": "IRR 8.1%",
                    "status": "completed",
                    "context": {"irr": 0.081},
                },
            },
            {
                "seqNo": 1,
                "agentName": "sensitivity",
                "requirement": "敏感性分析",
                "status": "interrupted",
                "dependsOn": [0],
                "result": {
                    "recordId": "r1",
                    "output": "请问电价浮动范围？",
                    "status": "interrupted",
                    "context": {"missing": ["range"]},
                },
            },
            {
                "seqNo": 2,
                "agentName": "report",
                "requirement": "生成报告",
                "status": "not_started",
                "dependsOn": [0, 1],
                "result": None,
            },
        ],
        "context": {"location": "杭州市余杭区", "answers": {"1": ["±10%"]}},
    }


def test_agent_plan_round_trips_with_results_context_and_chinese_quotes():
    plan = pv_plan()
    text = plan_to_dot(plan)
    assert dot_to_plan(text, agents=AGENTS) == plan
    assert 'status="完成"' in text and 'status="待用户输入中"' in text and 'status="待初始化"' in text
    assert 'question="请问电价浮动范围？"' in text and 'answer="±10%"' in text
    assert "0 -> 2;" in text and "1 -> 2;" in text


def test_ready_not_started_step_is_shown_as_waiting_to_run_and_reads_back_not_started():
    plan = pv_plan()
    plan["steps"][1].update(status="completed", result=None)
    text = plan_to_dot(plan)
    assert 'agentName="report" status="待运行"' in text
    assert dot_to_plan(text)["steps"][2]["status"] == "not_started"


def test_hand_written_agent_plan_uses_defaults_and_the_seed_tool_code_spelling():
    text = """digraph G { // 人写的计划
      0 [label="测算" type=agent toolCode=pv_calc];
      1 [label="报告" type="agent" agentName="report" status="待运行"];
      0 -> 1 }"""
    plan = dot_to_plan(text, agents=AGENTS)
    assert plan["planId"] == "" and plan["context"] == {}
    assert [(s["agentName"], s["status"], s["dependsOn"]) for s in plan["steps"]] == [
        ("pv_calc", "not_started", []),
        ("report", "not_started", [0]),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("digraph G { 0 [type=agent agentName=pv_calc] ", "line 1, column"),
        ("digraph G {\n 0 [type=agent agentName=pv_calc];\n 1 [type=agent agentName=report\n}", "line 3"),
        ("graph G { 0 [type=agent agentName=pv_calc] }", "undirected"),
        (
            "digraph G { 0 [type=agent agentName=pv_calc]; 0 [type=agent agentName=report] }",
            "node 0: declared twice",
        ),
        (
            'digraph G { 0 [type=agent agentName=pv_calc]; "0" [type=agent agentName=report] }',
            "declared twice",
        ),
        ("digraph G { 0 [type=agent agentName=pv_calc]; 0 -> 1 }", "node 1 is not declared"),
        ("digraph G { 0 [type=function agentName=pv_calc] }", "node 0: unknown node type 'function'"),
        (
            "digraph G { 0 [type=agent agentName=solar] }",
            "node 0: unknown agent 'solar'; available: knowledge, pv_calc",
        ),
        ("digraph G { 0 [type=agent] }", "node 0: missing agentName"),
        ("digraph G { x [type=agent agentName=pv_calc] }", "node x: agent-plan node ids are step numbers"),
        ("digraph G { 0 [type=agent agentName=pv_calc status=done] }", "node 0: unknown status 'done'"),
        (
            'digraph G { 0 [type=agent agentName=pv_calc toolOutput="{oops"] }',
            "node 0: toolOutput is not JSON",
        ),
        ('digraph G { context="[1]"; 0 [type=agent agentName=pv_calc] }', "context must be a JSON object"),
        (
            "digraph G { 0 [type=agent agentName=pv_calc]; 1 [type=agent agentName=report]; 0 -> {1} }",
            "an edge points to a group",
        ),
        ("digraph G { subgraph cluster_a { 0 [type=agent agentName=pv_calc] } }", "subgraphs"),
        ("digraph G { }", "no nodes"),
        (
            "digraph A { 0 [type=agent agentName=pv_calc] } digraph B { 1 [type=agent agentName=report] }",
            "found 2",
        ),
    ],
)
def test_bad_agent_plans_are_rejected_with_the_location_and_the_fix(text, expected):
    with pytest.raises(PlanFormatError) as err:
        dot_to_plan(text, agents=AGENTS)
    assert expected in str(err.value)


def test_a_cycle_is_named_edge_by_edge():
    text = """digraph G { 0 [type=agent agentName=pv_calc]; 1 [type=agent agentName=sensitivity];
      2 [type=agent agentName=report]; 0 -> 1; 1 -> 2; 2 -> 1 }"""
    with pytest.raises(PlanFormatError, match=r"cycle: 1 -> 2 -> 1; remove one edge"):
        dot_to_plan(text, agents=AGENTS)


def test_seed_example_parses_and_round_trips_keeping_extra_attributes():
    plan = dot_to_internal_plan(SEED_EP)
    assert [(n.id, n.type, n.label) for n in plan.nodes] == [
        ("1", "function", "节点A"),
        ("2", "confirm", "节点B"),
        ("3", "function", "节点C"),
        ("4", "confirm", "节点D"),
    ]
    assert plan.node("4").extra == {"component": "xx", "payload": "xx"}
    assert plan.depends_on("3") == ("2",)
    assert dot_to_internal_plan(internal_plan_to_dot(plan)) == plan


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('digraph G { 1 [label="a" type="agent"] }', "agent nodes belong to the agent-level plan"),
        ('digraph G { 1 [label="a" type="tool"] }', "use one of: function, multiFunction, confirm"),
        ('digraph G { 1 [label="a" type="function" status="运行中"] }', "needs a toolCode"),
        ("digraph G { a [type=confirm]; b [type=confirm]; a -> b; b -> a }", "cycle: a -> b -> a"),
    ],
)
def test_bad_internal_plans_are_rejected(text, expected):
    with pytest.raises(PlanFormatError) as err:
        dot_to_internal_plan(text)
    assert expected in str(err.value)


# Any text, including quotes, backslashes, escapes like \n written literally, newlines and CJK.
texts = st.text(max_size=30) | st.sampled_from(
    ['"', "\\", '\\"', "\\n", "a\\", '节点\n"引号"', "{a|b}", "->", "//x"]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
results = st.none() | st.builds(
    lambda r, o, s, c: {"recordId": r, "output": o, "status": s, "context": c},
    texts,
    texts,
    st.sampled_from(["completed", "interrupted", "failed"]),
    st.dictionaries(texts, json_values, max_size=3),
)


@st.composite
def plans(draw):
    n = draw(st.integers(1, 5))
    seqs = sorted(draw(st.sets(st.integers(0, 50), min_size=n, max_size=n)))
    steps = [
        {
            "seqNo": seq,
            "agentName": draw(st.sampled_from(sorted(AGENTS))),
            "requirement": draw(texts),
            "status": draw(
                st.sampled_from(["not_started", "in_progress", "interrupted", "completed", "failed"])
            ),
            "dependsOn": sorted(draw(st.sets(st.sampled_from(seqs[:i]), max_size=i)) if i else []),
            "result": draw(results),
        }
        for i, seq in enumerate(seqs)
    ]
    context = draw(st.dictionaries(texts, json_values, max_size=3))
    return {"planId": draw(texts), "userQuery": draw(texts), "steps": steps, "context": context}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_any_agent_plan_round_trips(plan):
    assert dot_to_plan(plan_to_dot(plan), agents=AGENTS) == plan


@st.composite
def internal_plans(draw):
    ids = draw(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=5, unique=True))
    nodes = []
    for node_id in ids:
        node_type = draw(st.sampled_from(["function", "multiFunction", "confirm"]))
        status = draw(
            st.sampled_from(["待初始化", "待用户输入中", "失败"] if node_type != "confirm" else STATUS_LABELS)
        )
        extra = draw(st.dictionaries(st.sampled_from(["component", "payload", "profile"]), texts, max_size=2))
        nodes.append(
            InternalNode(
                id=node_id,
                label=draw(texts),
                type=node_type,
                status=status,
                tool_code=draw(texts),
                tool_input=draw(texts),
                tool_output=draw(texts),
                question=draw(texts),
                answer=draw(texts),
                extra=extra,
            )
        )
    edges = [
        (a, b) for i, b in enumerate(ids[1:], 1) for a in draw(st.sets(st.sampled_from(ids[:i]), max_size=2))
    ]
    return InternalPlan(id=draw(st.text(max_size=5)), nodes=tuple(nodes), edges=tuple(edges))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(internal_plans())
def test_any_internal_plan_round_trips(plan):
    assert dot_to_internal_plan(internal_plan_to_dot(plan)) == plan
