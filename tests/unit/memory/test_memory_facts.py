"""Long-term facts: kept per user in SQLite, replaced by key, forgotten, and disclosed within the budget."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from memory import BlockMemory
from memory.facts import FACTS_HEADER
from memory.tokens import count_messages_tokens, count_tokens


def test_facts_are_per_user_replaced_by_key_forgotten_and_survive_a_reopen(tmp_path):
    mem = BlockMemory(tmp_path / "m", DeterministicFakeEmbedding(size=16))
    first = mem.facts.put(
        "u1", "electricity_price", 0.72, "自用电价 0.72 元/kWh", "我们的电价是0.72", conversation_id="c1"
    )
    mem.facts.put("u2", "electricity_price", 0.5, "自用电价 0.5 元/kWh", "我的电价0.5", conversation_id="x")
    newer = mem.facts.put(
        "u1", "electricity_price", 0.75, "自用电价 0.75 元/kWh", "我们的电价是0.75", conversation_id="c2"
    )
    mem.facts.put("u1", "lang", "en", "report 的输出使用英文", "以后报告都用英文", scope=["report"])
    mem.close()

    again = BlockMemory(tmp_path / "m", DeterministicFakeEmbedding(size=16))
    facts = again.facts.for_user("u1")
    assert [f.key for f in facts] == ["lang", "electricity_price"]  # newest first, one per key
    price = again.facts.get("u1", "electricity_price")
    assert price is not None and price.value == 0.75 and price.conversation_id == "c2"
    assert price.fact_id == newer.fact_id != first.fact_id
    assert again.facts.get("u1", "lang").scope == ("report",)  # type: ignore[union-attr]
    assert [f.value for f in again.facts.for_user("u2")] == [0.5]

    assert again.facts.forget("u1", "nope") is None
    assert again.facts.forget("u2", newer.fact_id) is None  # another user's id forgets nothing
    gone = again.facts.forget("u1", newer.fact_id)
    assert gone is not None and gone.key == "electricity_price"
    assert again.facts.forget("u1", "lang") is not None  # by key too
    assert again.facts.for_user("u1") == [] and len(again.facts.for_user("u2")) == 1
    again.close()


def test_the_users_facts_are_in_the_one_system_message_of_every_window_of_that_user(memory):
    mine = memory.scope("planner", "u1", "c2")
    theirs = memory.scope("planner", "u2", "c9")
    memory.facts.put(
        "u1", "electricity_price", 0.72, "自用电价 0.72 元/kWh", "我们的电价是0.72", conversation_id="c1"
    )
    for ns in (mine, theirs):
        memory.add_messages(ns, [HumanMessage("你好", id=f"h_{ns}"), AIMessage("您好", id=f"a_{ns}")])
    window = memory.disclose(mine, 600, "你是规划器。", HumanMessage("帮我测算"))
    assert sum(isinstance(m, SystemMessage) for m in window) == 1 and isinstance(window[0], SystemMessage)
    assert FACTS_HEADER in window[0].content and "自用电价 0.72 元/kWh" in window[0].content
    other = memory.disclose(theirs, 600, "你是规划器。", HumanMessage("帮我测算"))
    assert "0.72" not in other[0].content and FACTS_HEADER not in other[0].content
    ref = memory.disclose_ref(mine, 600, "你是规划器。", None)
    rebuilt = memory.window(ref, "你是规划器。")
    assert rebuilt is not None and "自用电价 0.72 元/kWh" in rebuilt[0].content


def test_many_facts_take_at_most_their_share_of_the_budget_newest_first(memory):
    ns = memory.scope("planner", "u1", "c1")
    for i in range(60):
        memory.facts.put(
            "u1", f"note:{i}", i, f"第{i}条长期偏好：报告里写明数据来源和假设条件", "…", now=1000.0 + i
        )
    budget = 500
    window = memory.disclose(ns, budget, "你是规划器。", HumanMessage("帮我测算"))
    system = window[0].content
    lines = [line for line in system.splitlines() if line.startswith("- 第")]
    assert lines and lines[0].startswith("- 第59条")  # the newest first
    assert len(lines) < 60
    share = count_tokens("\n".join([FACTS_HEADER, *lines]))
    assert share <= budget * memory.settings.facts_share
    assert count_messages_tokens(window) <= budget
