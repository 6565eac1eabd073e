"""Search returns the k best messages: k honoured, message ids exact, windows, time and speakers."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.metadata import message_line
from memory.when import time_span
from tools.memory_tools import make_memory_tools

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def _at(minutes: float) -> dict:
    return {"created_at": (START + timedelta(minutes=minutes)).isoformat()}


def _chat(n: int) -> list:
    """n Q&A pairs, every one mentioning 'inverter' with a unique marker word."""
    out = []
    for i in range(n):
        out.append(HumanMessage(f"inverter question marker{i}q", id=f"q{i}", additional_kwargs=_at(i)))
        out.append(AIMessage(f"inverter answer marker{i}a", id=f"a{i}", additional_kwargs=_at(i + 0.5)))
    return out


def test_search_honours_k_beyond_the_disclosure_cap(memory):
    memory.add_messages("ns", _chat(20))
    memory.flush("ns")
    assert len(memory.search("ns", "inverter", 25)) == 25
    assert len(memory.search("ns", "inverter", 3)) == 3
    assert len(memory.search("ns", "inverter", 40)) == 40  # every message matches
    assert memory.search("ns", "inverter", 0) == []
    [search_block, _, _] = make_memory_tools(memory, "ns")
    shown = search_block.invoke({"query": "inverter"})
    assert shown.count("[b_main_") == memory.settings.top_k == 8  # the tool keeps the prompt cap


def test_hit_text_contains_exactly_its_messages(tmp_path):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    memory = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0
    )  # hash vectors are noise
    memory.add_messages("ns", _chat(12))
    memory.flush("ns")
    hits = memory.search("ns", "inverter marker3a", 30)
    assert hits[0].message_ids == ["a3"]
    everything = {str(m.id): m for m in memory.messages("ns")}
    for hit in hits:
        quoted = [everything[i] for i in hit.message_ids]
        assert hit.text == "\n".join(message_line(m) for m in quoted)
        others = [m for i, m in everything.items() if i not in hit.message_ids]
        assert not any(str(m.content).split()[-1] in hit.text for m in others)
        assert set(hit.message_ids) <= set(hit.metadata["block_message_ids"])
        assert hit.block_id == hit.metadata["block_id"]
    memory.close()


def test_a_reply_without_the_question_words_is_found_through_its_neighbour(tmp_path):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    filler = [
        HumanMessage(f"the weather is nice today {i}", id=f"f{i}", additional_kwargs=_at(i))
        for i in range(20)
    ]
    memory.add_messages("ns", filler)
    memory.add_messages(
        "ns",
        [
            HumanMessage(
                "Which loan rate did the bank offer for the plant?", id="ask", additional_kwargs=_at(30)
            ),
            AIMessage("They came back with 4.2 percent.", id="answer", additional_kwargs=_at(31)),
        ],
    )
    memory.add_messages(
        "ns", [HumanMessage(f"more small talk {i}", additional_kwargs=_at(40 + i)) for i in range(5)]
    )
    memory.flush("ns")
    ids = [i for h in memory.search("ns", "what loan rate did the bank offer", 3) for i in h.message_ids]
    assert "ask" in ids and "answer" in ids


def test_a_named_month_brings_that_months_messages_first(tmp_path):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    msgs = []
    for month in range(1, 7):
        when = datetime(2024, month, 10, 12, tzinfo=UTC).isoformat()
        msgs.append(
            HumanMessage(
                f"we went hiking near lake {month}", id=f"h{month}", additional_kwargs={"created_at": when}
            )
        )
        msgs.append(AIMessage("sounds fun", id=f"r{month}", additional_kwargs={"created_at": when}))
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    assert memory.search("ns", "where did we go hiking in March 2024?", 1)[0].message_ids == ["h3"]
    assert memory.search("ns", "where did we go hiking last month?", 1)[0].message_ids == ["h5"]
    without = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, time_boost=0.0)
    assert without.search("ns", "where did we go hiking in March 2024?", 1)[0].message_ids != ["h3"]
    memory.close()
    without.close()


def test_a_named_speaker_is_preferred_and_their_name_is_not_a_search_word(tmp_path):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    msgs = [
        HumanMessage("Hey Alice, how are you?", name="Bob", id="greet", additional_kwargs=_at(0)),
        AIMessage(
            "I bought a red bicycle yesterday.", name="Alice", id="alice_bike", additional_kwargs=_at(1)
        ),
        HumanMessage("I bought a blue bicycle too.", name="Bob", id="bob_bike", additional_kwargs=_at(2)),
        AIMessage("Nice, we can ride together.", name="Alice", id="ride", additional_kwargs=_at(3)),
    ] + [
        HumanMessage(f"small talk about the weather {i}", name="Bob", additional_kwargs=_at(9 + i))
        for i in range(12)
    ]
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    hits = memory.search("ns", "What bicycle did Alice buy?", 4)
    assert hits[0].message_ids == ["alice_bike"]
    assert hits[1].message_ids == ["bob_bike"]


def test_time_spans_in_english_and_chinese():
    ref = datetime(2024, 2, 5, 15, tzinfo=UTC).timestamp()

    def days(query: str) -> tuple[str, str] | None:
        span = time_span(query, ref)
        if span is None:
            return None
        return tuple(datetime.fromtimestamp(x, UTC).date().isoformat() for x in span)  # type: ignore[return-value]

    assert days("Where did Nora travel in May 2023?") == ("2023-05-01", "2023-06-01")
    assert days("what happened on March 3?") == ("2023-03-03", "2023-03-04")  # latest March before now
    assert days("What pet did she adopt last month?") == ("2024-01-01", "2024-02-01")
    assert days("what did we discuss last week") == ("2024-01-29", "2024-02-05")
    assert days("李雷去年六月去哪里旅行了？") == ("2023-06-01", "2023-07-01")
    assert days("唐宁2023年7月买了什么？") == ("2023-07-01", "2023-08-01")
    assert days("上个月聊了什么") == ("2024-01-01", "2024-02-01")
    assert days("昨天说的电价") == ("2024-02-04", "2024-02-05")
    assert days("I may go to the park") is None
    assert days("组件效率是多少") is None
    assert time_span("last week", 0.0) is None


def test_blocks_stored_before_per_message_terms_are_found_whole(tmp_path):
    import json

    from langchain_core.embeddings import DeterministicFakeEmbedding

    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    memory.add_messages("ns", _chat(3))
    memory.flush("ns")
    rows = memory._store.query("SELECT block_id, terms FROM blocks WHERE ns='ns'")
    with memory._store.transaction() as conn:  # the older format: one term list per closure
        for block_id, terms in rows:
            stored = json.loads(terms)
            closures = [[t for m in stored["messages"] for t in m]]
            conn.execute(
                "UPDATE blocks SET terms=? WHERE ns='ns' AND block_id=?", (json.dumps(closures), block_id)
            )
    memory.close()
    again = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    hits = again.search("ns", "marker1a", 5)
    assert hits and "a1" in hits[0].message_ids
    assert hits[0].message_ids == hits[0].metadata["block_message_ids"]
    assert hits[0].text.count("\n") == len(hits[0].message_ids) - 1
    again.close()


class _Concepts(Embeddings):
    """A toy embedder that knows a few concepts by their words (what MiniLM does for paraphrases)."""

    CONCEPTS = (
        ("travel", "trip", "got back", "holiday", "flew"),
        ("weather", "rain", "sunny"),
        ("coffee", "espresso"),
        ("football", "match", "game"),
    )

    def _vec(self, text: str) -> list[float]:
        low = text.lower()
        return [0.05] + [float(sum(w in low for w in words)) for words in self.CONCEPTS]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The query's vector."""
        return self._vec(text)


def test_each_message_is_scored_by_its_own_closure_vector_not_only_its_blocks(tmp_path):
    """The closure that answers ranks first inside its block, though it shares no word with the question."""
    msgs = _trip_talk()
    for weight, first in ((0.5, "q3"), (0.0, "q0")):
        memory = BlockMemory(tmp_path / str(weight), _Concepts(), piece_weight=weight, merge_threshold=-1.0)
        memory.add_messages("ns", msgs)
        memory.flush("ns")
        assert len(memory.list_blocks("ns")) == 1  # one block: its vector is the mean of all four topics
        hits = memory.search("ns", "Where did Maya go on holiday?", 3)
        assert hits[0].message_ids == [first]  # without closure vectors the block's order decides
        memory.close()
    reopened = BlockMemory(tmp_path / "0.5", _Concepts())
    assert reopened.search("ns", "Where did Maya go on holiday?", 1)[0].message_ids == ["q3"]
    reopened.close()


def test_a_store_written_before_closure_vectors_opens_and_searches(tmp_path):
    """Older stores have no `pvecs` column: it is added on open; their blocks keep the block cosine."""
    import sqlite3

    msgs = _chat(6)
    memory = BlockMemory(tmp_path, _Concepts())
    memory.add_messages("ns", msgs[:8])
    memory.flush("ns")
    memory.close()
    with sqlite3.connect(tmp_path / "memory.sqlite3") as conn:
        conn.execute("ALTER TABLE blocks DROP COLUMN pvecs")
    reopened = BlockMemory(tmp_path, _Concepts())
    assert [h.message_ids for h in reopened.search("ns", "inverter marker2a", 1)] == [["a2"]]
    reopened.add_messages("ns", msgs[8:])
    reopened.flush("ns")
    assert [h.message_ids for h in reopened.search("ns", "inverter marker5q", 1)] == [["q5"]]
    reopened.close()


def test_closure_vectors_survive_rewrites_and_compaction():
    """The newest block is rewritten as it grows; its retired rows never leak into a cosine."""
    import numpy as np

    from memory._closures import ClosureVectors

    index = ClosureVectors()
    unit = np.eye(4, dtype=np.float32)
    for i in range(300):  # every rewrite retires the previous rows; compaction runs on the way
        index.add("b_tail", unit[: 1 + i % 4].ravel().tolist(), [2] * (1 + i % 4))
        index.add(f"b_{i}", (2 * unit[i % 4]).tolist(), [1])
    assert index.count < 2 * index.live + 256
    got = index.per_message(["b_tail", "b_7", "missing"], np.array([0, 0, 0, 3.0], dtype=np.float32))
    assert got["b_tail"] == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]  # 4 closures of 2 messages
    assert got["b_7"] == [1.0] and "missing" not in got
    index.remove("b_tail")
    assert "b_tail" not in index.per_message(["b_tail"], np.ones(4, dtype=np.float32))


def _pet_story() -> list:
    """A pet adopted (breed and name two turns apart), small talk, and a vet visit naming only the pet."""
    msgs = [
        HumanMessage("We adopted a Siamese on Sunday.", id="adopt", additional_kwargs=_at(0)),
        AIMessage("Lovely! What did you call her?", id="ask", additional_kwargs=_at(1)),
        HumanMessage("Mochi.", id="name", additional_kwargs=_at(2)),
    ]
    msgs += [
        HumanMessage(f"coffee and weather chat number {i}", id=f"f{i}", additional_kwargs=_at(10 + 10 * i))
        for i in range(60)
    ]
    msgs.append(
        HumanMessage("Mochi had to see the vet: an ear infection.", id="vet", additional_kwargs=_at(700))
    )
    msgs += [HumanMessage(f"coffee again {i}", additional_kwargs=_at(710 + 10 * i)) for i in range(10)]
    return msgs


def test_a_second_hop_through_a_rare_word_of_the_best_turns_neighbours(tmp_path):
    """'What illness did the Siamese have?': the vet turn shares no word with the question; the
    adoption turn does, and two turns later names the pet, whose name the vet turn uses."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    memory.add_messages("ns", _pet_story())
    memory.flush("ns")
    ids = [i for h in memory.search("ns", "What illness did the Siamese have?", 5) for i in h.message_ids]
    assert "adopt" in ids and "vet" in ids
    without = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, expansion_weight=0.0
    )
    ids = [i for h in without.search("ns", "What illness did the Siamese have?", 5) for i in h.message_ids]
    assert "adopt" in ids and "vet" not in ids
    memory.close()
    without.close()


def test_expansion_takes_only_rare_words(tmp_path):
    """A word in more than `expansion_df` of the messages ('coffee') is never a second-hop word."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from memory.recall import expansion_terms, unit_lexical
    from memory.text import search_terms, stem_terms

    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    story = _pet_story()
    story[1] = AIMessage(
        "Lovely! Coffee to celebrate? What did you call her?", id="ask", additional_kwargs=_at(1)
    )
    memory.add_messages("ns", story)
    memory.flush("ns")
    state = memory._state("ns")
    for expansion_df, coffee in ((memory.settings.expansion_df, False), (0.0, True)):
        settings = dataclasses.replace(
            memory.settings, expansion_df=expansion_df, expansion_terms=20, expansion_repeat=1
        )
        with state.lock:
            terms = stem_terms(search_terms("What illness did the Siamese have?"))  # as messages are indexed
            words = expansion_terms(state, unit_lexical(state, terms, settings), terms, settings)
        assert "mochi" in words
        assert (stem_terms(["coffee"])[0] in words) is coffee
    memory.close()


def _trip_talk() -> list:
    talk = [
        ("Did you see the match yesterday?", "Yes, what a game."),
        ("It was so sunny today.", "No rain here either."),
        ("I need an espresso.", "Coffee sounds good."),
        ("I just flew back from Lisbon.", "Oh nice, how long were you away?"),
    ]
    msgs = []
    for i, (q, a) in enumerate(talk):
        msgs.append(HumanMessage(q, id=f"q{i}", name="Maya", additional_kwargs=_at(i)))
        msgs.append(AIMessage(a, id=f"a{i}", name="Tom", additional_kwargs=_at(i + 0.5)))
    return msgs


def test_message_vectors_score_each_message_by_its_own_words(tmp_path):
    """With `message_vectors` the trip turn, not its reply, carries the travel cosine; it persists."""
    for on in (True, False):
        memory = BlockMemory(  # short_prior off: the cosine itself, not scaled by the message's length
            tmp_path / str(on), _Concepts(), message_vectors=on, merge_threshold=-1.0, short_prior=0.0
        )
        for m in _trip_talk():  # one message at a time: the growing block keeps every message's vector
            memory.add_messages("ns", [m])
        memory.flush("ns")
        hits = {h.message_ids[0]: h for h in memory.search("ns", "Where did Maya go on holiday?", 8)}
        trip, reply = hits["q3"].metadata["cosine"], hits["a3"].metadata["cosine"]
        assert (trip > reply + 0.2) if on else trip == reply  # a closure vector is shared by its messages
        memory.close()
    reopened = BlockMemory(tmp_path / "True", _Concepts())  # what is stored decides, not the setting
    hits = {h.message_ids[0]: h for h in reopened.search("ns", "Where did Maya go on holiday?", 8)}
    assert hits["q3"].metadata["cosine"] > hits["a3"].metadata["cosine"] + 0.2
    state = reopened._state("ns")
    assert sum(len(rows) for rows in state.closures.rows.values()) == len(_trip_talk())
    reopened.close()


def test_english_stems_match_other_forms_of_a_word(tmp_path):
    """'adopt' finds 'adopted' and 'cities' finds 'city' with `stem_english`; Chinese is untouched."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from memory.text import stem_terms

    assert stem_terms(["travelled", "cities", "city", "上海", "500kw", "tom"]) == [
        "travel", "citi", "citi", "上海", "500kw", "tom",
    ]  # fmt: skip
    msgs = [
        HumanMessage(f"coffee and weather chat {i}", id=f"f{i}", additional_kwargs=_at(i)) for i in range(30)
    ]
    msgs.insert(10, HumanMessage("We adopted a Siamese kitten.", id="pet", additional_kwargs=_at(9.5)))
    msgs.insert(20, HumanMessage("The city was lovely in spring.", id="town", additional_kwargs=_at(19.5)))
    for stem in (True, False):
        memory = BlockMemory(
            tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, stem_english=stem
        )
        if stem:
            memory.add_messages("ns", msgs)
            memory.flush("ns")
        for query, want in (("Which pet did she adopt?", "pet"), ("Which cities did she like?", "town")):
            ids = [i for h in memory.search("ns", query, 3) for i in h.message_ids]
            assert (want in ids) is stem
        memory.close()


class _Counting(Embeddings):
    """Hash vectors that count how often a query is embedded."""

    def __init__(self) -> None:
        from langchain_core.embeddings import DeterministicFakeEmbedding

        self.inner = DeterministicFakeEmbedding(size=16)
        self.queries: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.inner.embed_query(text)


def test_a_repeated_query_is_embedded_once_and_answers_the_same(tmp_path):
    emb = _Counting()
    memory = BlockMemory(tmp_path / "m", emb)
    memory.add_messages("ns", _chat(6))
    memory.flush("ns")
    first = memory.search("ns", "inverter marker3a", 4)
    again = memory.search("ns", "inverter marker3a", 4)
    assert [h.message_ids for h in again] == [h.message_ids for h in first]
    assert [h.score for h in again] == [h.score for h in first]
    assert emb.queries.count("inverter marker3a") == 1
    memory.search("ns", "inverter marker4q", 4)
    assert emb.queries.count("inverter marker4q") == 1  # another text is embedded
    memory.close()


def test_ranking_follows_a_block_rewritten_after_a_search(tmp_path):
    """Recency and tags of a block are held in memory for ranking; a growing block updates them."""
    settings = {"merge_threshold": -1.0, "vector_weight": 0.0}  # lexical relevance only: exact ratios
    memory = BlockMemory(tmp_path / "m", _Counting(), **settings)
    memory.add_messages("ns", [
        HumanMessage("kiln temperature notes", id="old", additional_kwargs=_at(0)),
        AIMessage("noted", id="reply", additional_kwargs=_at(0.5)),
    ])  # fmt: skip
    memory.flush("ns")
    [before] = memory.search("ns", "kiln temperature", 1)
    critical = {**_at(1), "tags": ["critical"]}
    memory.add_messages("ns", [
        HumanMessage("and the kiln?", id="ask", additional_kwargs=_at(1)),
        AIMessage("below 1200 degrees, always", id="crit", additional_kwargs=critical),
    ])  # fmt: skip
    memory.flush("ns")
    [after] = memory.search("ns", "kiln temperature", 1)
    assert after.message_ids == ["old"] and after.block_id == before.block_id  # the same block, grown
    assert after.metadata["tags"] == ["critical"]
    assert after.score == pytest.approx(2.0 * before.score, rel=0.01)  # the boost, read after the rewrite
    reopened = BlockMemory(tmp_path / "m", _Counting(), **settings)
    [loaded] = reopened.search("ns", "kiln temperature", 1)  # a state loaded from SQLite ranks the same
    assert (loaded.message_ids, loaded.score) == (after.message_ids, after.score)
    reopened.close()
    memory.close()


class _Names(_Concepts):
    """`_Concepts` plus one dimension for the name Maya (a real embedder also reads names)."""

    def _vec(self, text: str) -> list[float]:
        return [*super()._vec(text), 2.0 * text.lower().count("maya")]


def test_a_named_speaker_is_not_part_of_the_embedded_query(tmp_path):
    """Greetings carry the name; a query vector with the name is nearest to them, not to the answer."""
    msgs = []
    for day in range(6):  # every session opens with a greeting that names Maya
        at = 60 * 24 * day
        msgs.append(
            HumanMessage("Hey Maya, how are you?", name="Tom", id=f"hey{day}", additional_kwargs=_at(at))
        )
        msgs.append(AIMessage("Good, you?", name="Maya", id=f"good{day}", additional_kwargs=_at(at + 1)))
    msgs.append(
        AIMessage("I just got back from Lisbon.", name="Maya", id="trip", additional_kwargs=_at(9000))
    )
    msgs.append(HumanMessage("Oh nice!", name="Tom", id="nice", additional_kwargs=_at(9001)))
    for keep, first in ((False, "trip"), (True, "hey0")):
        memory = BlockMemory(tmp_path / str(keep), _Names(), speaker_vector=keep)
        memory.add_messages("ns", msgs)
        memory.flush("ns")
        hits = memory.search("ns", "Where did Maya's travels take her?", 3)
        assert hits[0].message_ids[0].startswith(first[:3])
        memory.close()


def test_names_leave_the_embedded_query_with_their_possessive():
    from memory._search import without_names

    assert without_names("What did MAYA's beagle have?", {"maya"}) == "What did beagle have?"
    assert without_names("唐宁都去过哪些城市旅行？", {"唐宁"}) == "都去过哪些城市旅行？"
    assert without_names("Maya?", {"maya"}) == "Maya?"  # nothing else to embed: the name stays
    assert without_names("pvsyst and pv_calc results", {"pv"}) == "pvsyst and pv_calc results"
    assert without_names("pv results", {"pv"}) == "results"


def test_a_speaker_name_inside_a_longer_word_is_not_that_speaker(tmp_path):
    """A speaker named "pv" is named by "pv's" or "pv", not by "pvsyst": the word stays searchable.

    Before, names were taken out of the BM25 query as substrings, so "pvsyst" became "syst" and
    the one message that says "pvsyst" was not found by its word.
    """
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from memory._search import names_in, strip_names

    memory = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0)
    msgs = (
        [
            HumanMessage(
                "which simulation tool should we trust?", name="ana", id="ask", additional_kwargs=_at(0)
            ),
            AIMessage("pvsyst reports the yield per month", name="pv", id="tool", additional_kwargs=_at(1)),
        ]
        + [
            HumanMessage(f"the weather is nice {i}", name="ana", id=f"w{i}", additional_kwargs=_at(9 + i))
            for i in range(12)
        ]
        + [AIMessage("the tariff is fixed for ten years", name="pv", id="tariff", additional_kwargs=_at(30))]
    )
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    assert memory.search("ns", "pvsyst", 1)[0].message_ids == ["tool"]
    assert names_in("what does pvsyst say?", {"pv", "ana"}) == set()
    assert names_in("what did pv's tool say, ana?", {"pv", "ana"}) == {"pv", "ana"}
    assert strip_names("what did pv's tool say about pvsyst?", {"pv"}) == "what did tool say about pvsyst?"
    assert names_in("唐宁都去过哪些城市旅行？", {"唐宁", "pv"}) == {"唐宁"}
    memory.close()


def test_the_second_hop_asks_for_the_word_the_neighbourhood_repeats(tmp_path):
    """With `expansion_repeat=2` the second hop asks only for rare words said at least twice around
    the best turns — the pet's name ('Mochi.' and 'photos of Mochi') — not for every rare word of
    the small talk beside them, which leads to other talk ('Lovely Sunday …') instead of the vet."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    story = _pet_story()
    story[1] = AIMessage("Lovely! What did you call her?", id="ask", additional_kwargs=_at(1))
    story.insert(3, AIMessage("Send photos of Mochi, please.", id="photos", additional_kwargs=_at(3)))
    story[30] = HumanMessage(
        "Lovely Sunday: send the photos, call me.", id="other", additional_kwargs=_at(300)
    )
    found = {}
    for repeat in (2, 1):
        memory = BlockMemory(
            tmp_path / str(repeat),
            DeterministicFakeEmbedding(size=16),
            vector_weight=0.0,
            expansion_repeat=repeat,
        )
        memory.add_messages("ns", story)
        memory.flush("ns")
        hits = memory.search("ns", "What illness did the Siamese have?", 6)
        found[repeat] = [i for h in hits for i in h.message_ids]
        memory.close()
    assert "vet" in found[2] and "other" not in found[2]
    assert "vet" not in found[1] and "other" in found[1]
