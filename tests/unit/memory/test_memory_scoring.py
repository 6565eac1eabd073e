"""How relevance and recency combine (docs/memory.md): decay floor, tag boosts, deterministic ties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.scoring import Candidate, decay, rank
from memory.types import MemorySettings

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def _turn(text: str, at: datetime, msg_id: str, tags: list[str] | None = None) -> list:
    kw = {"created_at": at.isoformat(), **({"tags": tags} if tags else {})}
    return [
        HumanMessage(text, id=msg_id, additional_kwargs=kw),
        AIMessage("好的，记下了。", additional_kwargs=kw),
    ]


def _memory(tmp_path, **settings) -> BlockMemory:
    memory = BlockMemory(tmp_path / str(settings), DeterministicFakeEmbedding(size=16), **settings)
    old = NOW - timedelta(days=400)
    messages = _turn("我们厂房的变压器容量是 1250 千伏安", old, "old_fact")
    for i in range(20):  # fresh turns that share only the common word 容量
        messages += _turn(
            f"第 {i} 个方案的装机容量按 {500 + i} kW 估算收益", NOW + timedelta(minutes=10 * i), f"n{i}"
        )
    memory.add_messages("pv_u_c", messages)
    return memory


@pytest.mark.parametrize("floor", [0.9, 0.6])  # the default, and a much stronger decay
def test_an_old_fact_that_is_the_only_real_match_still_ranks_first(tmp_path, floor):
    memory = _memory(tmp_path, decay_floor=floor)
    hits = memory.search("pv_u_c", "变压器容量多大")
    assert "old_fact" in hits[0].message_ids
    assert hits[0].score == pytest.approx(hits[0].metadata["relevance"] * decay(400 * 86400, memory.settings))


def test_without_the_floor_pure_exponential_decay_buries_it(tmp_path):
    memory = _memory(tmp_path, decay_floor=0.0)  # the seed's exp(-λΔt) alone
    hits = memory.search("pv_u_c", "变压器容量多大")
    assert "old_fact" not in hits[0].message_ids
    assert all("old_fact" not in h.message_ids for h in hits[:5])


def test_recency_decides_between_equally_relevant_blocks_and_boosts_apply():
    settings = MemorySettings(cjk_vector_weight=0.0)  # a Chinese query scored by BM25 alone
    day = 86400.0
    cands = [
        Candidate("ns", "b_old", bm25=5.0, last_at=0.0),
        Candidate("ns", "b_new", bm25=5.0, last_at=60 * day),
        Candidate("ns", "b_old_critical", bm25=5.0, last_at=0.0, tags=["critical"]),
        Candidate("ns", "b_anchor", bm25=2.5, last_at=60 * day, tags=["summary_anchor"]),
    ]
    ranked = rank(cands, "变压器", 60 * day, settings)
    assert [c.block_id for c in ranked] == ["b_old_critical", "b_new", "b_old", "b_anchor"]
    assert ranked[0].score == pytest.approx(2.0 * decay(60 * day, settings))
    assert ranked[2].score == pytest.approx(0.9 + 0.1 * 0.25)  # two half-lives old, floor 0.9
    assert ranked[3].score == pytest.approx(1.5 * 0.5)  # half the relevance, fresh, ×1.5


def test_equal_scores_rank_the_same_way_every_time():
    settings = MemorySettings()
    make = lambda: [Candidate("ns", f"b_{i}", bm25=1.0, last_at=100.0) for i in (3, 1, 2)]  # noqa: E731
    orders = {tuple(c.block_id for c in rank(make(), "x", 100.0, settings)) for _ in range(5)}
    assert orders == {("b_1", "b_2", "b_3")}


def test_the_cjk_share_of_a_query_gets_its_own_vector_weight():
    """MiniLM reads little Chinese: a Chinese query's vector share is `cjk_vector_weight`, not `vector_weight`."""
    from memory.scoring import vector_weight

    settings = MemorySettings()
    assert vector_weight("Which cities has Tom travelled to?", settings) == pytest.approx(0.8)
    assert vector_weight("唐宁都去过哪些城市旅行", settings) == pytest.approx(0.5)
    assert 0.5 < vector_weight("苏州 Lakeview 光伏", settings) < 0.8  # mixed: in proportion
    assert vector_weight("唐宁都去过哪些城市旅行", MemorySettings(cjk_vector_weight=0.0)) == 0.0
    assert vector_weight(
        "唐宁都去过哪些城市旅行", MemorySettings(multilingual_embeddings=True)
    ) == pytest.approx(0.8)
