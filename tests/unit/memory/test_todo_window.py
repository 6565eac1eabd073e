"""A plan step's window and default searches hold its own sub-task (todo) only; others are reached by id."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from graphs.context import Context
from graphs.services import ServiceHub
from memory.disclosure import ELSEWHERE_HEADER
from memory.tokens import count_messages_tokens

EARLIER, NOW = "todo_aaa_0", "todo_bbb_0"


def _services(data_dir):
    svc = ServiceHub()(Context(user_id="alice", conversation_id="c1", data_dir=str(data_dir)))
    memory = svc.agent_memory("assistant")
    for i in range(4):
        todo = {"todo_id": EARLIER}
        memory.add(
            [
                HumanMessage(f"测算余杭区方案 {i}", additional_kwargs=todo),
                AIMessage(f"余杭区 500kW 方案 {i} 的 IRR 为 9.{i}%", additional_kwargs=todo),
            ]
        )
    now = {"todo_id": NOW}
    memory.add(
        [
            HumanMessage("整理本对话的方案", additional_kwargs=now),
            AIMessage("好的，先查结果。", additional_kwargs=now),
        ]
    )
    return svc


def _text(window) -> str:
    return "\n".join(m.text for m in window)


def test_a_step_window_holds_its_own_todo_and_names_the_others_by_id(data_dir):
    svc = _services(data_dir)
    whole = svc.agent_window("assistant", "你是通用助手。", "比较这些方案")
    assert "IRR 为 9.3%" in _text(whole)  # without a todo the agent's newest messages show
    window = svc.agent_window("assistant", "你是通用助手。", "比较这些方案", todo_id=NOW)
    assert sum(isinstance(m, SystemMessage) for m in window) == 1 and window[-1].text == "比较这些方案"
    assert "IRR 为 9." not in _text(window) and "好的，先查结果。" in _text(window)
    system = window[0].text
    assert ELSEWHERE_HEADER in system and f"- {EARLIER}（" in system  # named, with its block count
    assert f'"todo_id": "{EARLIER}"' not in system  # its block metadata is not listed
    small = svc.agent_window("assistant", "你是通用助手。", "比较这些方案", todo_id=NOW, budget=300)
    assert count_messages_tokens(small) <= 300


def test_a_step_searches_its_own_todo_by_default_and_another_only_by_its_id(data_dir):
    svc = _services(data_dir)
    tools = {t.name: t for t in svc.agent_tools("assistant", NOW)}
    assert "IRR" not in tools["search_block"].invoke({"query": "余杭区 IRR"})
    assert "IRR 为 9." in tools["search_block"].invoke({"query": "余杭区 IRR", "todo_id": EARLIER})
    assert EARLIER not in tools["list_blocks"].invoke({})
    assert EARLIER in tools["list_blocks"].invoke({"todo_id": EARLIER})
