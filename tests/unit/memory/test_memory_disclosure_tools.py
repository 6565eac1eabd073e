import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from memory import BlockMemory
from memory.tokens import count_messages_tokens
from tools.memory_tools import make_memory_tools


def _conversation(memory: BlockMemory, ns: str, turns: int) -> None:
    for i in range(turns):
        call = f"call_{i}"
        memory.add_messages(
            ns,
            [
                HumanMessage(f"第 {i} 轮：请计算 {100 + i} kW 的电站收益，地点杭州"),
                AIMessage("", tool_calls=[{"name": "pv_calc", "args": {"kw": 100 + i}, "id": call}]),
                ToolMessage(
                    f"年发电量 {1000 * (i + 1)} kWh，IRR {8 + i % 5}%", tool_call_id=call, name="pv_calc"
                ),
                AIMessage(f"第 {i} 轮结果：IRR {8 + i % 5}%。"),
            ],
        )


@pytest.mark.parametrize("turns", [1, 12, 60])
def test_window_stays_within_budget_with_one_system_message_and_whole_tool_pairs(memory: BlockMemory, turns):
    _conversation(memory, "a_u_c", turns)
    memory.add_messages("a_u_c", [HumanMessage("顺便问下补贴政策")])
    window = memory.disclose("a_u_c", 400, "你是光伏测算助手。", HumanMessage("那 IRR 最高是哪一轮？"))
    assert count_messages_tokens(window) <= 400
    assert isinstance(window[0], SystemMessage)
    assert sum(isinstance(m, SystemMessage) for m in window) == 1
    assert window[-1].content == "那 IRR 最高是哪一轮？"
    calls = {c["id"] for m in window if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in window if isinstance(m, ToolMessage)}
    assert calls == results
    assert "顺便问下补贴政策" in [m.content for m in window]  # the loose message is shown


def test_block_list_in_prompt_below_ten_blocks_then_a_hint(memory: BlockMemory):
    _conversation(memory, "a_u_c", 3)
    system = memory.disclose("a_u_c", 2000, "提示")[0].content
    assert "b_main_001" in system and "search_block" in system
    _conversation(memory, "a_u_c", 12)
    system = memory.disclose("a_u_c", 2000, "提示")[0].content
    assert "b_main_001" not in system and "list_blocks" in system


def test_tiny_budget_truncates_input_instead_of_overflowing(memory: BlockMemory):
    window = memory.disclose("a_u_c", 40, "系统提示" * 50, HumanMessage("长问题" * 100))
    assert count_messages_tokens(window) <= 40
    with pytest.raises(ValueError, match="raise the budget"):
        memory.disclose("a_u_c", 5, "x", HumanMessage("y"))


def test_tools_hide_the_namespace_and_report_bad_ids(memory: BlockMemory):
    alice = memory.scope("pv_calc", "alice", "c1")
    bob = memory.scope("pv_calc", "bob", "c1")
    memory.add_messages(
        alice,
        [
            HumanMessage("读取报告"),
            AIMessage("", tool_calls=[{"name": "read", "args": {}, "id": "r1"}]),
            ToolMessage("报告内容 " * 3000, tool_call_id="r1", name="read"),
            AIMessage("读完了"),
        ],
    )
    ref = memory.list_blocks(alice)[0]["data_ids"][0]
    search, listing, load = make_memory_tools(memory, bob)
    for tool in (search, listing, load):
        assert not {"namespace", "user_id", "conversation_id", "memory"} & set(tool.args)
    assert "没有找到" in search.invoke({"query": "读取报告"})
    assert "还没有" in listing.invoke({})
    error = load.invoke({"data_id": ref})
    assert "无法读取" in error and "还没有存储的数据" in error
    search, listing, load = make_memory_tools(memory, alice)
    assert "b_main_001" in search.invoke({"query": "报告"})
    assert ref in listing.invoke({})
    page = load.invoke({"data_id": ref, "offset": 0, "limit": 10})
    assert "报告内容 报告内容" in page and "offset=10" in page
    assert ref in load.invoke({"data_id": "store://" + "a" * 32})  # lists the valid ids
    assert len(memory.messages(alice)) == 4  # tool results are not written back


@pytest.mark.parametrize(
    ("turns", "question", "budget"), [(2, "那 IRR 最高是哪一轮？", 2000), (12, "很长的问题" * 200, 300)]
)
def test_window_reference_rebuilds_the_disclosed_messages(memory: BlockMemory, turns, question, budget):
    _conversation(memory, "a_u_c", turns)
    current = HumanMessage(question, id="current")
    memory.add_messages("a_u_c", [current])
    direct = memory.disclose("a_u_c", budget, "提示", current)
    ref = memory.disclose_ref("a_u_c", budget, "提示", current)
    assert ref["message_ids"][-1] == "current" and ref["tokens"] == count_messages_tokens(direct) <= budget
    assert "IRR" not in str(ref)  # ids and counts, no text
    rebuilt = memory.window(ref, "提示")
    assert rebuilt is not None
    assert [(type(m), m.content) for m in rebuilt] == [(type(m), m.content) for m in direct]
    assert memory.window({**ref, "message_ids": ["gone", *ref["message_ids"]]}, "提示") is None
