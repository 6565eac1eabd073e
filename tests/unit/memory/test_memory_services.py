"""Run-scoped memory services that model-calling nodes and agents use."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from graphs.context import Context
from memory.tokens import count_messages_tokens
from nodes.services import agent_memory, agent_tools, agent_window, block_memory


def test_agent_window_and_tools_use_the_agent_namespace(data_dir):
    ctx = Context(user_id="alice", conversation_id="c1", data_dir=str(data_dir), token_budget=300)
    for i in range(30):
        agent_memory(ctx, "knowledge").add(
            [
                HumanMessage(f"第 {i} 个问题：余电上网电价怎么定？"),
                AIMessage(f"第 {i} 次回答：按燃煤基准价。"),
            ]
        )
    agent_memory(ctx, "pv_calc").add([HumanMessage("屋顶面积 3200 平方米"), AIMessage("好的。")])
    window = agent_window(ctx, "knowledge", "你是政策问答助手。", "补贴还有吗？")
    assert sum(isinstance(m, SystemMessage) for m in window) == 1 and isinstance(window[0], SystemMessage)
    assert window[-1].content == "补贴还有吗？" and count_messages_tokens(window) <= 300
    search = {t.name: t for t in agent_tools(ctx, "knowledge")}["search_block"]
    assert "3200" not in search.invoke({"query": "屋顶面积"})  # pv_calc's memory is not knowledge's
    assert "3200" in {t.name: t for t in agent_tools(ctx, "pv_calc")}["search_block"].invoke(
        {"query": "屋顶面积"}
    )
    assert block_memory(ctx).long_term("alice") == []  # nothing important was said
