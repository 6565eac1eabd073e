"""Run-scoped services that model-calling nodes and agents use (built from the Context in one place)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from graphs.context import Context
from graphs.services import ServiceHub
from memory.tokens import count_messages_tokens


def test_agent_window_and_tools_use_the_agent_namespace(data_dir):
    svc = ServiceHub()(
        Context(user_id="alice", conversation_id="c1", data_dir=str(data_dir), token_budget=300)
    )
    for i in range(30):
        svc.agent_memory("knowledge").add(
            [
                HumanMessage(f"第 {i} 个问题：余电上网电价怎么定？"),
                AIMessage(f"第 {i} 次回答：按燃煤基准价。"),
            ]
        )
    svc.agent_memory("pv_calc").add([HumanMessage("屋顶面积 3200 平方米"), AIMessage("好的。")])
    window = svc.agent_window("knowledge", "你是政策问答助手。", "补贴还有吗？")
    assert sum(isinstance(m, SystemMessage) for m in window) == 1 and isinstance(window[0], SystemMessage)
    assert window[-1].content == "补贴还有吗？" and count_messages_tokens(window) <= 300
    search = {t.name: t for t in svc.agent_tools("knowledge")}["search_block"]
    assert "3200" not in search.invoke({"query": "屋顶面积"})  # pv_calc's memory is not knowledge's
    assert "3200" in {t.name: t for t in svc.agent_tools("pv_calc")}["search_block"].invoke(
        {"query": "屋顶面积"}
    )
    assert svc.memory.long_term("alice") == []  # nothing important was said


def test_one_hub_shares_stores_per_data_dir_and_two_hubs_stay_consistent(data_dir):
    ctx = Context(user_id="alice", conversation_id="c1", data_dir=str(data_dir))
    one, two = ServiceHub(), ServiceHub()
    assert one(ctx).memory is one(ctx).memory and one(ctx).plans is one(ctx).plans
    assert one(ctx).memory is not two(ctx).memory
    # Two instances on the same files (two hubs, two processes) append to one namespace in turn.
    for i in range(3):
        one(ctx).agent_memory("planner").add([HumanMessage(f"甲{i}")])
        two(ctx).agent_memory("planner").add([HumanMessage(f"乙{i}")])
    texts = [m.content for m in one(ctx).agent_memory("planner").messages()]
    assert texts == ["甲0", "乙0", "甲1", "乙1", "甲2", "乙2"]


def test_results_are_stored_once_and_found_by_kind(data_dir):
    svc = ServiceHub()(Context(user_id="alice", conversation_id="c1", data_dir=str(data_dir)))
    results = svc.results("pv_calc")
    first = results.put("pv_case", "p1", 0, {"cashflow": list(range(100))}, {"npv": 1})
    second = results.put("pv_case", "p2", 0, {"cashflow": [1]}, {"npv": 2})
    assert first.startswith("store://") and first != second
    latest = results.latest("pv_case")
    assert latest is not None and latest.ref == second and latest.headline == {"npv": 2}
    assert results.latest("pv_case", lambda r: r.headline["npv"] == 1).ref == first  # type: ignore[union-attr]
    assert results.load(first)["cashflow"] == list(range(100))
    other = ServiceHub()(Context(user_id="alice", conversation_id="c2", data_dir=str(data_dir)))
    assert other.results("pv_calc").latest("pv_case") is None  # another conversation
