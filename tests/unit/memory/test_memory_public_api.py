"""The public API exactly as issue 4 states it (held-out benchmarks call these signatures)."""

from __future__ import annotations

import tempfile

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory import Block, BlockHit, BlockMemory
from memory.tokens import count_messages_tokens

DESIGN_KEYS = ["block_id", "todo_id", "block_type", "keywords", "core_semantic", "create_time", "data_ids"]


def _conversation() -> list[BaseMessage]:
    return [
        HumanMessage(
            "Our roof is 3200 square metres", id="m1", additional_kwargs={"created_at": "2025-01-01T10:00:00"}
        ),
        AIMessage("Noted.", id="m2", additional_kwargs={"created_at": "2025-01-01T10:00:05"}),
        HumanMessage(
            "记住：预算上限 150 万元",
            id="m3",
            additional_kwargs={"created_at": "2025-01-01T10:20:00", "tags": ["critical"]},
        ),
        AIMessage("好的，已记录。", id="m4", additional_kwargs={"created_at": "2025-01-01T10:20:05"}),
        AIMessage(
            "",
            id="m5",
            tool_calls=[{"name": "read", "args": {"path": "bill.csv"}, "id": "c1"}],
            additional_kwargs={"created_at": "2025-01-01T11:00:00"},
        ),
        ToolMessage("month,kwh\n1,900", id="m6", tool_call_id="c1", name="read"),
        AIMessage("Consumption is 900 kWh a month.", id="m7"),
    ]


def test_positional_signatures_and_result_shapes(tmp_path):
    memory = BlockMemory(str(tmp_path), DeterministicFakeEmbedding(size=16))
    blocks: list[Block] = []
    for message in _conversation():  # one message at a time …
        blocks += memory.add_messages("pv_calc_alice_c1", [message])
    assert blocks and all(isinstance(b, Block) for b in blocks)
    assert memory.add_messages("pv_calc_alice_c2", _conversation())  # … or all at once

    hits = memory.search("pv_calc_alice_c1", "预算上限", 3, None)
    assert 0 < len(hits) <= 3 and all(isinstance(h, BlockHit) for h in hits)
    top = hits[0]
    assert "m3" in top.message_ids and "150" in top.text
    assert isinstance(top.block_id, str) and isinstance(top.score, float) and top.score > 0
    assert top.metadata["block_id"] == top.block_id and "critical" in top.metadata["tags"]
    assert memory.search("pv_calc_alice_c1", "roof", todo_id="nope") == []

    listed = memory.list_blocks("pv_calc_alice_c1", None)
    assert listed and all(list(b) == DESIGN_KEYS for b in listed)
    assert memory.list_blocks("pv_calc_alice_c1", "main") == listed

    window = memory.disclose("pv_calc_alice_c1", 300)
    assert isinstance(window[0], SystemMessage) and sum(isinstance(m, SystemMessage) for m in window) == 1
    assert count_messages_tokens(window) <= 300

    ref = memory.offload("x" * 5000, "pv_calc_alice_c1")
    assert ref.startswith("store://")
    assert memory.load(ref) == "x" * 5000
    assert memory.load(ref, 4990) == "x" * 10
    assert memory.load(ref, 10, 5) == "xxxxx"
    memory.close()


def test_defaults_need_no_arguments_beyond_embeddings(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    memory = BlockMemory(embeddings=DeterministicFakeEmbedding(size=8))  # path=None: a temp dir
    assert memory.root.parent == tmp_path and (memory.root / "memory.sqlite3").exists()
    memory.add_messages("a_u_c", [HumanMessage("hello"), AIMessage("hi")])
    hits = memory.search("a_u_c", "hello")
    assert {h.block_id for h in hits} == {"b_main_001"} and hits[0].text == "user: hello"
    memory.close()
