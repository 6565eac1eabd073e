"""Model-refreshed internal plans: the seed's @epupdatelog@/@EP@ format, checks, retries, fuzzing."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from tools.plans.dot import EP_NODE_TYPES, InternalPlan, dot_to_internal_plan, internal_plan_to_dot
from tools.plans.reflect import (
    PlanUpdateError,
    apply_ep_update,
    ep_update_request,
    parse_ep_update,
    reflect_ep,
)
from tools.plans.status import STATUS_LABELS

TOOLS = {"pv_economics", "sensitivity_scan", "write_report"}

CURRENT = dot_to_internal_plan(
    """digraph G {
  1 [label="经济测算" shape=record type="function" toolCode="pv_economics" status="完成" toolInput="{\\"kw\\": 500}" toolOutput="IRR 8%" question=""];
  2 [label="确认电价范围" shape=ellipse type="confirm" status="待初始化" question="" answer=""];
  3 [label="敏感性分析" shape=record type="function" toolCode="sensitivity_scan" status="待初始化" toolInput="" toolOutput="" question=""];
  1 -> 2; 2 -> 3;
}""",
    plan_id="ep_1",
)


def answer(graph: str, note: str = "电价范围需要用户确认，先问用户。", ep_id: str = "ep_1") -> str:
    return f"好的。\n@epupdatelog@\n{note}\n@epupdatelog@\n@EP@\n*id={ep_id}\n*graph={graph}\n@EP@\n"


ASK_USER = {
    'label="确认电价范围" shape="ellipse" type="confirm" status="待初始化" question=""': (
        'label="确认电价范围" shape="ellipse" type="confirm" status="待用户输入中" question="电价浮动范围是多少？"'
    )
}


def good_update() -> str:
    text = internal_plan_to_dot(CURRENT)
    for old, new in ASK_USER.items():
        text = text.replace(old, new)
    return answer(text)


def test_a_valid_update_in_the_seed_format_is_parsed_and_applied():
    note, ep_id, proposed = parse_ep_update(good_update())
    assert note == "电价范围需要用户确认，先问用户。" and ep_id == "ep_1"
    plan = apply_ep_update(CURRENT, proposed, TOOLS)
    assert plan.node("2").status == "待用户输入中" and plan.node("2").question == "电价浮动范围是多少？"
    assert plan.node("1") == CURRENT.node("1")


def test_the_seed_prompt_example_parses_with_its_comma_and_extra_attributes():
    seed = """@epupdatelog@
新增样本预分析节点
@epupdatelog@
@EP@
*id=1
*graph=digraph G {
1 [label = "标题1" shape=record type="function" toolCode="" status="待用户输入中" toolInput="" toolOutput="", question=""];
2 [label = "标题2" shape=ellipse type="confirm" status="待初始化"];
3 [label = "标题3" shape=record type="function"  toolCode="samplePreAnalysis" status="待初始化" toolInput="" toolOutput="" profile="" question=""];
1 -> 2; 2 -> 3;
}
@EP@"""
    note, ep_id, plan = parse_ep_update(seed)
    assert (note, ep_id, [n.type for n in plan.nodes]) == (
        "新增样本预分析节点",
        "1",
        ["function", "confirm", "function"],
    )
    assert plan.node("3").extra == {"profile": ""} and plan.depends_on("3") == ("2",)


def test_code_fences_inside_the_ep_block_are_tolerated():
    text = good_update().replace("*graph=", "```dot\n*graph=").replace("\n@EP@\n", "\n```\n@EP@\n")
    assert parse_ep_update(text)[2].node("2").status == "待用户输入中"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我改好了", "the @epupdatelog@ block is missing"),
        (answer("digraph G { 1 [type=confirm] }").replace("@EP@\n", "", 2), "the @EP@ block is missing"),
        (answer("digraph G { 1 [type=confirm] }") * 2, "appears 2 times"),
        (answer("digraph G { 1 [type=confirm] }", note="  "), "block is empty"),
        (answer("digraph G { 1 [type=confirm] }").replace("*graph=", ""), "no *graph=digraph"),
        (answer("digraph G { 1 [type=confirm] "), "*graph is not a valid EP: line 1"),
        (answer("digraph G { 1 [type=agent] }"), "agent nodes belong to the agent-level plan"),
        (answer('digraph G { epId="x"; 1 [type=confirm] }'), "*id=ep_1 but the graph says epId=x"),
    ],
)
def test_malformed_answers_are_explained(text, expected):
    with pytest.raises(PlanUpdateError) as err:
        parse_ep_update(text)
    assert expected in str(err.value)


def proposal(**replacements: str) -> InternalPlan:
    text = internal_plan_to_dot(CURRENT)
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    return parse_ep_update(answer(text))[2]


@pytest.mark.parametrize(
    ("replacements", "expected"),
    [
        (
            {'toolInput="{\\"kw\\": 500}"': 'toolInput="{\\"kw\\": 800}"'},
            "node 1 was 完成 and cannot change its toolInput",
        ),
        ({"1 -> 2;": ""}, "node 2"),  # edge removal is fine; but see the combined test below
        (
            {'status="待初始化" toolCode="sensitivity_scan"': 'status="运行中" toolCode="sensitivity_scan"'},
            "node 3: 待初始化 → 运行中 is not an allowed transition; the model may move 待初始化 to: 待运行, 待用户输入中",
        ),
        (
            {'toolCode="sensitivity_scan"': 'toolCode="monte_carlo"'},
            "node 3: unknown tool(s) monte_carlo; available: pv_economics, sensitivity_scan, write_report",
        ),
        (
            {'toolCode="sensitivity_scan"': 'toolCode="sensitivity_scan,write_report"'},
            'use type="multiFunction"',
        ),
    ],
)
def test_rule_breaking_updates_are_rejected_with_a_fix(replacements, expected):
    new = proposal(**replacements)
    if expected == "node 2":
        assert apply_ep_update(CURRENT, new, TOOLS).depends_on("2") == ()
        return
    with pytest.raises(PlanUpdateError) as err:
        apply_ep_update(CURRENT, new, TOOLS)
    assert expected in str(err.value)


def test_completed_nodes_cannot_be_removed_and_all_problems_come_at_once():
    new = InternalPlan(id="ep_1", nodes=CURRENT.nodes[1:], edges=(("2", "3"),))
    bad = InternalPlan(id="ep_9", nodes=new.nodes, edges=new.edges)
    with pytest.raises(PlanUpdateError) as err:
        apply_ep_update(CURRENT, bad, TOOLS)
    message = str(err.value)
    assert "you wrote *id=ep_9 but the current EP is ep_1" in message
    assert "node 1 is 完成 and cannot be removed" in message


def test_new_nodes_start_unfinished_and_must_keep_the_plan_acyclic():
    text = internal_plan_to_dot(CURRENT).replace(
        "2 -> 3;",
        '2 -> 3;\n  4 [label="报告" type="function" toolCode="write_report" status="完成"];\n  3 -> 4;',
    )
    with pytest.raises(
        PlanUpdateError, match="new node 4 must start as one of 待初始化, 待运行, 待用户输入中, not 完成"
    ):
        apply_ep_update(CURRENT, parse_ep_update(answer(text))[2], TOOLS)
    cyclic = answer(internal_plan_to_dot(CURRENT).replace("2 -> 3;", "2 -> 3;\n  3 -> 2;"))
    with pytest.raises(PlanUpdateError, match="cycle: 2 -> 3 -> 2"):
        parse_ep_update(cyclic)


def test_reflect_retries_with_feedback_then_applies_and_logs_the_note(caplog):
    model = GenericFakeChatModel(
        messages=iter([AIMessage(content="我更新了计划"), AIMessage(content=good_update())])
    )
    with caplog.at_level(logging.INFO, logger="plangraph.plan_reflect"):
        outcome = reflect_ep(model, [HumanMessage(ep_update_request(CURRENT, TOOLS))], CURRENT, TOOLS)
    assert outcome.updated and outcome.plan.node("2").status == "待用户输入中"
    assert outcome.errors == (
        "the @epupdatelog@ block is missing; write exactly one @epupdatelog@ … @epupdatelog@ block",
    )
    assert "EP ep_1 updated: 电价范围需要用户确认" in caplog.text


def test_reflect_keeps_the_old_plan_after_bounded_malformed_answers():
    bad = answer(internal_plan_to_dot(CURRENT).replace('status="完成"', 'status="待运行"'))
    model = GenericFakeChatModel(messages=iter([AIMessage(content=bad)] * 5))
    outcome = reflect_ep(model, [HumanMessage("更新 EP")], CURRENT, TOOLS, max_attempts=2)
    assert not outcome.updated and outcome.plan is CURRENT and len(outcome.errors) == 2
    assert "node 1 was 完成 and cannot change its status" in outcome.errors[0]


def test_the_feedback_message_tells_the_model_what_is_wrong():
    seen: list[list] = []

    class Recording(GenericFakeChatModel):
        def invoke(self, input, config=None, **kwargs):  # noqa: A002 - LangChain's signature
            seen.append(list(input))
            return super().invoke(input, config, **kwargs)

    model = Recording(messages=iter([AIMessage(content="no plan"), AIMessage(content=good_update())]))
    reflect_ep(model, [HumanMessage(ep_update_request(CURRENT, TOOLS))], CURRENT, TOOLS)
    feedback = seen[1][-1]
    assert (
        isinstance(feedback, HumanMessage)
        and "你输出的 EP 更新无法应用：the @epupdatelog@ block is missing" in feedback.text
    )
    assert "*id=ep_1" in seen[0][0].text and "pv_economics, sensitivity_scan, write_report" in seen[0][0].text


# --- fuzzing: the parser only ever raises PlanUpdateError, and what it returns is a valid plan ---

pieces = st.sampled_from(
    [
        "@epupdatelog@",
        "@EP@",
        "*id=",
        "*graph=",
        "digraph G {",
        "}",
        "{",
        "[",
        "]",
        ";",
        "->",
        "=",
        '"',
        "\\",
        "\n",
        "1",
        "2",
        "type=",
        "function",
        "confirm",
        "multiFunction",
        "agent",
        "status=",
        *STATUS_LABELS,
        "toolCode=",
        "label=",
        "节点",
        "subgraph",
        "graph",
        "//",
        "/*",
        "<",
        ">",
        ",",
        ":",
        "```",
    ]
)
fuzz_text = st.one_of(st.text(max_size=200), st.lists(pieces | st.text(max_size=5), max_size=60).map("".join))


def check_fuzz(text: str) -> None:
    try:
        note, _, plan = parse_ep_update(text)
    except PlanUpdateError:
        return
    assert note
    assert all(n.type in EP_NODE_TYPES and n.status in STATUS_LABELS for n in plan.nodes)
    assert dot_to_internal_plan(internal_plan_to_dot(plan), plan_id=plan.id) == plan


@settings(max_examples=300, deadline=None)
@given(fuzz_text)
def test_fuzzed_model_output_never_raises_anything_but_plan_update_error(text):
    check_fuzz(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(pieces | st.text(max_size=4), max_size=25).map("".join))
def test_fuzzed_graphs_inside_a_well_formed_wrapper(graph):
    check_fuzz(answer("digraph G {" + graph + "}"))
