"""Short-term tier: old, low-score consecutive blocks are merged into summary lines (seed 004)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.disclosure import OUTLINE_HEADER

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def _history() -> list:
    messages = []
    for i in range(40):
        at = (NOW - timedelta(days=100) if i < 24 else NOW) + timedelta(minutes=10 * i)
        text = "请记住我喜欢华为逆变器" if i == 10 else f"第 {i} 轮：{500 + i} kW 项目的收益怎么样"
        kw = {"created_at": at.isoformat()}
        messages += [
            HumanMessage(text, id=f"q{i}", additional_kwargs=kw),
            AIMessage(f"第 {i} 轮答复。", additional_kwargs=kw),
        ]
    return messages


def test_old_plain_runs_become_summary_lines_that_outline_the_window(tmp_path):
    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16))
    memory.add_messages("pv_u_c", _history())
    blocks = {b["block_id"]: i for i, b in enumerate(memory.list_blocks("pv_u_c"))}
    summaries = memory.summaries("pv_u_c")
    members = [blocks[b] for s in summaries for b in s["blocks"]]
    assert summaries and all(3 <= len(s["blocks"]) <= 8 for s in summaries)
    assert members == sorted(members) and max(members) < 24  # only the old turns …
    assert 10 not in members  # … and never the important one (it went to the long-term tier)
    assert "第 0 轮" in summaries[0]["text"]

    system = str(memory.disclose("pv_u_c", 2000, "提示")[0].content)
    assert OUTLINE_HEADER in system and summaries[-1]["text"] in system
    assert OUTLINE_HEADER not in str(memory.disclose("pv_u_c", 120, "提示")[0].content)  # dropped first
    lexical = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, cjk_vector_weight=0.0
    )
    hits = lexical.search("pv_u_c", "第 3 轮 503 kW")  # hash vectors are noise: BM25 alone
    assert any("q3" in h.message_ids for h in hits)  # summarised blocks stay searchable
    lexical.close()
    memory.close()

    again = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16))
    assert again.summaries("pv_u_c") == summaries
    assert again.consolidate("pv_u_c") == []  # nothing summarised twice
    again.close()


def test_no_summaries_for_blocks_younger_than_the_setting(tmp_path):
    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), summary_after_days=365)
    memory.add_messages("pv_u_c", _history())
    assert memory.summaries("pv_u_c") == []
    memory.close()
