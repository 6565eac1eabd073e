"""The 80 % rule: a window that would pass `compress_at` of its budget turns its oldest messages into gists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.disclosure import GISTS_HEADER
from memory.tokens import count_messages_tokens

PROMPT = "你是规划器。"


def _conversation(mem: BlockMemory, ns: str, turns: int) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    messages = []
    for i in range(turns):
        at = (start + timedelta(minutes=i)).isoformat()
        messages += [
            HumanMessage(f"第{i}轮：项目{i}号厂房的屋顶朝向和遮挡情况如何，组件能装多少块？", id=f"h{i}",
                         additional_kwargs={"created_at": at}),
            AIMessage(f"第{i}轮回答：{i}号厂房屋顶朝南，东侧有少量遮挡，按现场勘察约可布置{300 + i}块组件。",
                      id=f"a{i}", additional_kwargs={"created_at": at}),
        ]  # fmt: skip
    mem.add_messages(ns, messages)


def _pair(tmp_path):
    emb = DeterministicFakeEmbedding(size=16)
    plain = BlockMemory(tmp_path / "m", emb, compress_at=1.0)  # the window before the 80 % rule
    mem = BlockMemory(tmp_path / "m", emb)
    return plain, mem


def test_a_window_past_80_percent_turns_its_oldest_messages_into_gists_and_keeps_the_newest(tmp_path):
    plain, mem = _pair(tmp_path)
    ns = mem.scope("planner", "u1", "c1")
    plain.scope("planner", "u1", "c1")
    _conversation(mem, ns, 7)
    current = HumanMessage("帮我测算一下", id="now")
    natural = count_messages_tokens(plain.disclose(ns, 100_000, PROMPT, current))
    budget = int(natural / 0.95)  # the uncompressed window would fill 95 % of the budget
    before = plain.disclose(ns, budget, PROMPT, current)
    assert count_messages_tokens(before) > 0.8 * budget and GISTS_HEADER not in before[0].content

    window = mem.disclose(ns, budget, PROMPT, current)
    assert count_messages_tokens(window) <= 0.8 * budget
    system = window[0].content
    assert GISTS_HEADER in system
    kept_ids = [m.id for m in window[1:]]
    dropped = [m for m in before[1:] if m.id not in kept_ids]
    assert dropped and before[1] in dropped  # the oldest went first
    assert (
        kept_ids[-1] == "now" and before[-2].id in kept_ids
    )  # the input and the newest message stay verbatim
    gist_lines = system.split(GISTS_HEADER, 1)[1].strip().splitlines()
    assert 1 <= len(gist_lines) <= len(dropped)
    assert all(line.startswith("- ") for line in gist_lines)
    assert any(line.startswith("- b_main_") for line in gist_lines)  # named by the block that holds them
    # nothing is lost: a compressed message is still found by search
    first = dropped[0]
    hits = mem.search(ns, first.content[:14], k=3)
    assert first.id in {i for h in hits for i in h.message_ids}
    # the reference in graph state rebuilds the same window
    ref = mem.disclose_ref(ns, budget, PROMPT, None)
    assert ref["gists"] and mem.window(ref, PROMPT) == mem.disclose(ns, budget, PROMPT, None)
    plain.close()
    mem.close()


def test_a_window_under_80_percent_is_left_as_it_was(tmp_path):
    plain, mem = _pair(tmp_path)
    ns = mem.scope("planner", "u1", "c1")
    plain.scope("planner", "u1", "c1")
    _conversation(mem, ns, 4)
    current = HumanMessage("帮我测算一下", id="now")
    natural = count_messages_tokens(plain.disclose(ns, 100_000, PROMPT, current))
    budget = int(natural / 0.7)
    assert mem.disclose(ns, budget, PROMPT, current) == plain.disclose(ns, budget, PROMPT, current)
    plain.close()
    mem.close()


def test_over_the_budget_itself_the_list_and_whole_units_still_go_and_the_window_fits(tmp_path):
    _, mem = _pair(tmp_path)
    ns = mem.scope("planner", "u1", "c1")
    _conversation(mem, ns, 12)
    for budget in (120, 250, 400):
        window = mem.disclose(ns, budget, PROMPT, HumanMessage("帮我测算一下", id="now"))
        assert count_messages_tokens(window) <= budget
        assert window[-1].id == "now"
    mem.close()
