"""Memory in the graph, model mode, against a real OpenAI-compatible server on 127.0.0.1.

The disclose node builds the planner's window before the planner runs and keeps only a reference
in the checkpoint; the planner's model gets search_block / list_blocks / load on its own namespace,
and what they return is used for that call only.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, convert_to_messages

from memory.tokens import count_messages_tokens
from plangraph.runner import PlanRunner
from tests.support.openai_server import ScriptedOpenAIServer, reply_text, reply_tool_call
from tests.support.services import graph_memory

KNOWLEDGE_PLAN = {
    "steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答余电上网电价政策", "dependsOn": []}]
}
FACT = "我们工厂屋顶面积是 3200 平方米，彩钢瓦结构，朝南。"
FILLER = [
    ("分布式光伏的并网流程大概要多久？", "一般需要向电网公司提交接入申请，审批加验收大约一到两个月。"),
    ("组件价格今年是不是又降了？", "今年主流单晶组件报价继续下降，具体以供应商最新报价为准。"),
    ("逆变器一般怎么选型比较稳妥？", "看容量匹配、转换效率和售后网点，主流品牌之间差别不大。"),
    ("峰谷电价对收益影响大吗？", "自发自用比例高时影响明显，白天负荷越大，收益越好。"),
]


def _is_planner(body: dict) -> bool:
    return any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))


def _tokens(body: dict) -> int:
    """Prompt tokens of a request, counted with the budget's own tokenizer."""
    return count_messages_tokens(convert_to_messages(body["messages"]))


def _old_history(data_dir, user: str, conversation: str, turns: int) -> int:
    """Planner memory with the fact three days ago, then `turns` filler turns; returns its tokens."""
    memory = graph_memory(data_dir)
    ns = memory.scope("planner", user, conversation)
    start = datetime.now(UTC) - timedelta(days=3)
    messages = [
        HumanMessage(FACT, id="fact", additional_kwargs={"created_at": start.isoformat()}),
        AIMessage("好的，已记录屋顶面积。", additional_kwargs={"created_at": start.isoformat()}),
    ]
    for i in range(turns):
        q, a = FILLER[i % len(FILLER)]
        at = {"created_at": (start + timedelta(minutes=10 * (i + 1))).isoformat()}
        messages += [
            HumanMessage(f"{q}（第 {i} 次）", additional_kwargs=at),
            AIMessage(a, additional_kwargs=at),
        ]
    memory.add_messages(ns, messages)
    return count_messages_tokens(messages)


def test_planner_searches_old_fact_within_budget_and_keeps_nothing(model_env, data_dir):
    history_tokens = _old_history(data_dir, "u", "g1", turns=30)
    script = [
        reply_tool_call("search_block", {"query": "屋顶面积"}),
        reply_tool_call("create_plan", KNOWLEDGE_PLAN),
    ]
    with ScriptedOpenAIServer(
        script, responder=lambda body: reply_text("按资料[1]，余电上网按燃煤基准价结算。")
    ) as server:
        model_env(server, budget=600)
        with PlanRunner.open(user_id="u", conversation_id="g1") as runner:
            outcome = runner.run("按我之前说的屋顶面积，余电上网电价怎么定？")
            window = runner.graph.get_state(runner.config).values["window"]
        requests = [r for r in server.requests if _is_planner(r)]

    assert outcome.plan is not None and outcome.plan["steps"][0]["status"] == "completed"
    assert len(requests) == 2
    first, second = requests
    assert history_tokens > 600 and _tokens(first) <= 600  # the window, not the history
    assert [m["role"] for m in first["messages"]].count("system") == 1
    assert first["messages"][0]["role"] == "system" and first["messages"][-1]["role"] == "user"
    assert "3200" not in json.dumps(first["messages"], ensure_ascii=False)  # too old for the window
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]}
    assert {"search_block", "list_blocks", "load", "create_plan"} <= set(tools)
    for name in ("search_block", "list_blocks", "load"):
        assert not {"namespace", "user_id", "conversation_id", "memory"} & set(tools[name]["properties"])
    found = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert len(found) == 1 and "3200" in found[0] and "[b_main_001]" in found[0]

    kept = graph_memory(data_dir).messages("planner_u_g1")
    assert not any(isinstance(m, ToolMessage) or "[b_main_001]" in str(m.content) for m in kept)
    assert [type(m) for m in kept[-2:]] == [HumanMessage, AIMessage]  # the request and the answer
    assert window["namespace"] == "planner_u_g1" and window["tokens"] <= 600
    assert "3200" not in json.dumps(window) and len(json.dumps(window)) < 1500  # ids, not text


def test_planner_prompt_stays_flat_over_a_long_conversation(model_env, data_dir):
    budget = 400
    answer_text = "根据资料，余电上网电量按当地燃煤发电基准价结算，自发自用部分按用户电价节省电费。" * 2

    def answer(body: dict):
        return (
            reply_tool_call("create_plan", KNOWLEDGE_PLAN) if _is_planner(body) else reply_text(answer_text)
        )

    with ScriptedOpenAIServer(responder=answer) as server:
        model_env(server, budget=budget)
        with PlanRunner.open(user_id="u", conversation_id="g2") as runner:
            for turn in range(12):
                q, _ = FILLER[turn % len(FILLER)]
                runner.run(f"{q}这是第 {turn} 轮，请结合杭州余杭区 500kW 工商业项目回答。")
        sizes = [_tokens(r) for r in server.requests if _is_planner(r)]
    history = count_messages_tokens(graph_memory(data_dir).messages("planner_u_g2"))
    assert len(sizes) == 12 and max(sizes) <= budget < history / 3
    assert sizes[-1] <= sizes[4] + 40  # flat once the window is full, while the history keeps growing
