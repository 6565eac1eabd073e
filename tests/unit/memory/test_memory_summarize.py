"""BlockMemory.summarize: model-written gists for finished blocks only, bounded, idempotent."""

from __future__ import annotations

from datetime import datetime, timedelta

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory


def _memory(tmp_path) -> tuple[BlockMemory, str]:
    memory = BlockMemory(tmp_path / "mem", DeterministicFakeEmbedding(size=32))
    start = datetime(2026, 1, 1)
    messages = []
    for i in range(8):  # 10 minutes apart: every Q&A pair closes a block
        at = {"created_at": (start + timedelta(minutes=10 * i)).isoformat()}
        messages += [HumanMessage(f"问题{i}：装机容量多少？", additional_kwargs=at),
                     AIMessage(f"回答{i}：{100 * i}kW", additional_kwargs=at)]  # fmt: skip
    memory.add_messages("ns", messages)
    return memory, "ns"


def test_newest_finished_blocks_get_the_summary_once_and_the_growing_block_never(tmp_path):
    memory, ns = _memory(tmp_path)
    seen: list[str] = []

    def summarizer(text: str) -> str:
        seen.append(text)
        return f"  概括 {len(seen)}：" + "很长" * 40

    assert memory.summarize(ns, summarizer, limit=2) == 2
    blocks = memory.list_blocks(ns)
    gists = [b["core_semantic"] for b in blocks]
    assert sum(g.startswith("概括") for g in gists) == 2 and all(len(g) <= 50 for g in gists)
    assert not gists[-1].startswith("概括")  # the block still growing keeps its extractive gist
    assert "回答6" in seen[0]  # newest finished block first
    assert memory.summarize(ns, summarizer, limit=2) == 2  # the next two, not the same again
    assert len({t for t in seen}) == 4
    memory.close()


def test_an_empty_answer_keeps_the_extractive_gist_and_errors_propagate(tmp_path):
    memory, ns = _memory(tmp_path)
    before = [b["core_semantic"] for b in memory.list_blocks(ns)]
    assert memory.summarize(ns, lambda text: "   ", limit=3) == 0
    assert [b["core_semantic"] for b in memory.list_blocks(ns)] == before

    def broken(text: str) -> str:
        raise TimeoutError("model timed out")

    try:
        memory.summarize(ns, broken)
    except TimeoutError:
        pass
    else:
        raise AssertionError("a failing summarizer must raise to its caller")
    assert [b["core_semantic"] for b in memory.list_blocks(ns)] == before
    memory.close()
