"""Reflection mode with a fake chat model: updates applied, retried with the exact error, or refused."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage

from nodes.kit.ep import fixed_sequence_problems
from tests.unit.ep.ep_helpers import S1_ANSWER, Conversation
from tools.plans.dot import InternalNode, InternalPlan, dot_to_internal_plan, internal_plan_to_dot

QUESTION = "按杭州余杭区测算 IRR 约 18.9%，明显高于同类项目，请确认电价和造价是否无误？"
_CURRENT = re.compile(r"当前 EP（\*id=(.*?)）：\n(digraph G \{.*?\n\})\n", re.S)


class Prompts(BaseCallbackHandler):
    """Keeps the messages of every model call."""

    def __init__(self) -> None:
        self.calls: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.calls.extend(messages)


def fake(*texts: str) -> tuple[GenericFakeChatModel, Prompts]:
    prompts = Prompts()
    model = GenericFakeChatModel(messages=iter(AIMessage(content=t) for t in texts), callbacks=[prompts])
    return model, prompts


def update(plan: InternalPlan, note: str) -> str:
    return f"@epupdatelog@\n{note}\n@epupdatelog@\n@EP@\n*id={plan.id}\n*graph={internal_plan_to_dot(plan)}@EP@\n"


def after_pv_calc(data_dir) -> InternalPlan:
    """The EP the model sees after pv_calc's one tool call (values as that run writes them)."""
    done = Conversation(data_dir).run("pv_calc", "帮我进行光伏测算", answers=[S1_ANSWER])
    return dot_to_internal_plan(done["context"]["ep"], plan_id="plan-1:0")


def with_question(plan: InternalPlan) -> InternalPlan:
    ask = InternalNode(
        id="3", label="确认收益偏高的原因", type="confirm", status="待用户输入中", question=QUESTION
    )
    return replace(plan, nodes=(*plan.nodes, ask), edges=(*plan.edges, ("2", "3")))


def test_a_valid_update_adds_a_question_the_step_asks_and_the_answer_completes_it(tmp_path):
    model, prompts = fake(
        update(with_question(after_pv_calc(tmp_path)), "收益偏高，先请用户确认电价和造价。")
    )
    conv = Conversation(tmp_path, model=model)
    asked = conv.run("pv_calc", "帮我进行光伏测算", answers=[S1_ANSWER])
    assert asked["status"] == "interrupted" and asked["output"] == QUESTION
    assert asked["context"]["missing"] == []
    ep = dot_to_internal_plan(asked["context"]["ep"])
    assert [(n.id, n.status) for n in ep.nodes] == [("1", "完成"), ("2", "完成"), ("3", "待用户输入中")]
    assert "执行计划已更新：收益偏高，先请用户确认电价和造价。" in conv.progress
    (call,) = prompts.calls
    assert [m.type for m in call] == ["system", "human"]  # exactly one system message
    assert "pv_economics" in call[1].text and "光伏经济性测算结果" in call[1].text

    keep, prompts = fake(update(ep_after_answer(asked), "无需更新"))
    conv.model = keep
    done = conv.run("pv_calc", "帮我进行光伏测算", answers=[S1_ANSWER, "确认无误"], previous=asked)
    assert done["status"] == "completed"
    ep = dot_to_internal_plan(done["context"]["ep"])
    assert [n.status for n in ep.nodes] == ["完成", "完成", "完成"] and ep.node("3").answer == "确认无误"
    assert len(prompts.calls) == 1 and not any(p.startswith("执行计划已更新：无需") for p in conv.progress)


def ep_after_answer(asked: dict) -> InternalPlan:
    """What the model sees on the re-run: the plan with node 3 answered and running again."""
    plan = dot_to_internal_plan(asked["context"]["ep"])
    nodes = tuple(replace(n, status="运行中", answer="确认无误") if n.id == "3" else n for n in plan.nodes)
    return replace(plan, nodes=nodes)


def test_a_malformed_answer_is_retried_with_the_exact_error_then_applied(tmp_path):
    good = update(with_question(after_pv_calc(tmp_path)), "先请用户确认。")
    model, prompts = fake("我觉得计划没问题。", good)
    conv = Conversation(tmp_path, model=model)
    asked = conv.run("pv_calc", "帮我进行光伏测算", answers=[S1_ANSWER])
    assert asked["status"] == "interrupted" and asked["output"] == QUESTION
    first, second = prompts.calls
    assert [m.type for m in second] == ["system", "human", "ai", "human"]
    assert second[2].text == "我觉得计划没问题。"
    assert (
        "the @epupdatelog@ block is missing; write exactly one @epupdatelog@ … @epupdatelog@ block"
        in second[3].text
    )


def test_always_malformed_keeps_the_old_plan_and_the_step_completes(tmp_path, caplog):
    plan = after_pv_calc(tmp_path)
    tool_node = InternalNode(id="4", label="画图", type="function", status="待运行", tool_code="pv_economics")
    adds_a_tool = update(replace(plan, nodes=(*plan.nodes, tool_node)), "加一个画图节点。")
    model, prompts = fake(
        "好的", "@epupdatelog@\n改了\n@epupdatelog@\n@EP@\n*graph=digraph G { 1 -> }\n@EP@", adds_a_tool
    )
    conv = Conversation(tmp_path, model=model)
    with caplog.at_level(logging.WARNING, logger="plangraph.plan_reflect"):
        done = conv.run("pv_calc", "帮我进行光伏测算", answers=[S1_ANSWER])
    assert done["status"] == "completed" and done["output"].startswith("光伏经济性测算结果")
    assert dot_to_internal_plan(done["context"]["ep"]).nodes == plan.nodes  # the old plan, completed
    assert len(prompts.calls) == 3 and not any(p.startswith("执行计划已更新") for p in conv.progress)
    assert "*graph is not a valid EP: line 1" in prompts.calls[2][-1].text
    assert "3 rejected updates" in caplog.text and "cannot add tool nodes" in caplog.text


def _plan(text: str) -> InternalPlan:
    return dot_to_internal_plan(text, plan_id="p")


@pytest.mark.parametrize(
    ("new", "problem"),
    [
        ('1 [type="function" toolCode="a"]; 2 [type="function" toolCode="b"];', "cannot add tool nodes"),
        ("", "node 1 (a) cannot be removed"),
        ('1 [type="function" toolCode="b"];', "keep its type and toolCode"),
        (
            '1 [type="function" toolCode="a" status="待用户输入中" question="?"];',
            "only confirm nodes ask the user",
        ),
        ('1 [type="function" toolCode="a"]; 9 [type="confirm" status="待用户输入中"];', "has no question"),
    ],
)
def test_a_fixed_sequence_agent_may_only_add_or_change_confirm_nodes(new, problem):
    old = _plan('digraph G { 1 [type="function" toolCode="a" status="待运行"]; }')
    proposed = _plan(f"digraph G {{ {new or '8 [type=confirm];'} }}")
    assert any(problem in p for p in fixed_sequence_problems(old, proposed))
    fine = _plan(
        'digraph G { 1 [type="function" toolCode="a" status="待运行" label="改名"]; 9 [type="confirm"]; 1 -> 9; }'
    )
    assert fixed_sequence_problems(old, fine) == []


def test_without_a_model_no_reflection_happens_and_the_plan_is_the_template_run(tmp_path):
    conv = Conversation(tmp_path)  # model=None
    done = conv.run("pv_calc", "帮我进行光伏测算", answers=[S1_ANSWER])
    assert done["status"] == "completed" and not any("执行计划" in p for p in conv.progress)
    assert [n.status for n in dot_to_internal_plan(done["context"]["ep"]).nodes] == ["完成", "完成"]
