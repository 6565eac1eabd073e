"""Set questions ("which cities…", "都去过哪些…") spread their hits over events; others keep their order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.spread import asks_for_set, spread


@dataclass
class _Hit:
    block_id: str
    score: float


def test_set_questions_are_told_from_others():
    for question in (
        "Which cities has Tom travelled to?",
        "What pets does Maya have?",
        "唐宁都去过哪些城市旅行？",
    ):
        assert asks_for_set(question), question
    for question in (
        "What does she do?",
        "Which bus did she take?",
        "Where did Tom travel in May?",
        "他去了哪里？",
    ):
        assert not asks_for_set(question), question


def test_spread_takes_other_blocks_before_a_blocks_weaker_turns():
    ranked = [_Hit("a", 1.0), _Hit("a", 0.9), _Hit("a", 0.8), _Hit("b", 0.6), _Hit("c", 0.3)]
    got = [(h.block_id, h.score) for h in spread(ranked, 0.5, 4)]
    assert got == [("a", 1.0), ("b", 0.6), ("a", 0.9), ("c", 0.3)]  # a's third: 0.8 × 0.25 < 0.3
    assert spread(ranked, 1.0, 5) == ranked  # factor 1: the relevance order
    assert len(spread(ranked, 0.1, 9)) == 5


def test_a_set_question_reaches_more_events_within_the_same_hits(tmp_path):
    at = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    msgs = []
    for trip, city in enumerate(("Lisbon", "Kyoto", "Oslo")):  # three trips, sessions a day apart
        day = at + timedelta(days=trip)
        lines = [
            f"I just got back from {city}.",
            "How were the cities there?",
            f"The cities of {city} area were great.",
        ]
        if trip == 0:  # the first trip is talked about at length
            lines += ["Cities like that are rare.", "Which cities next?", "More cities, for sure."]
        for i, text in enumerate(lines):
            cls = HumanMessage if i % 2 == 0 else AIMessage
            msgs.append(
                cls(
                    text,
                    id=f"t{trip}_{i}",
                    additional_kwargs={"created_at": (day + timedelta(minutes=i)).isoformat()},
                )
            )
    question = "Which cities did we visit?"
    firsts = {}
    for factor in (1.0, 0.3):
        memory = BlockMemory(  # expansion_repeat=1: the second hop through the name the first trip
            tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, set_spread=factor,
            expansion_repeat=1,  # repeats ("Lisbon") pulls its turns up too, and 3 hits are few
        )  # fmt: skip
        if factor == 1.0:
            memory.add_messages("ns", msgs)
            memory.flush("ns")
        hits = memory.search("ns", question, 3)
        firsts[factor] = {h.message_ids[0].split("_")[0] for h in hits}
        memory.close()
    assert len(firsts[0.3]) > len(firsts[1.0])
