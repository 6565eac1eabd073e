"""Chinese thesaurus classes (词林) as search terms: a turn naming a member of the asked class is found."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.concepts import category_groups, concept_terms, query_concepts

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def _at(minutes: float) -> dict:
    return {"created_at": (START + timedelta(minutes=minutes)).isoformat()}


def _story() -> list:
    """Small talk, one turn about cello lessons, one about a recital; neither says 乐器 or 演出."""
    msgs = []
    for i in range(40):
        msgs.append(
            HumanMessage(f"今天又下雨了，咖啡喝了第{i}杯。", id=f"f{i}", additional_kwargs=_at(10 * i))
        )
        msgs.append(AIMessage("哈哈，我也是。", id=f"r{i}", additional_kwargs=_at(10 * i + 1)))
    msgs.insert(30, HumanMessage("我报名学大提琴了。", id="cello", additional_kwargs=_at(151)))
    msgs.insert(60, HumanMessage("我周六第一次登台了！", id="stage", additional_kwargs=_at(301)))
    return msgs


def test_words_of_one_class_share_a_concept_term_and_other_text_has_none():
    assert set(concept_terms(["乐器"])) & set(concept_terms(["大提琴"]))
    assert set(concept_terms(["城市"])) & set(concept_terms(["成都"]))
    assert not set(concept_terms(["乐器"])) & set(concept_terms(["成都"]))
    assert concept_terms(["cello", "2024", "大提琴x"]) == []
    # a word of several senses spreads one unit of weight over them; skipped words give nothing
    weights = query_concepts(["单位", "什么", "车", "去年"], frozenset({"什么"}))  # 车, 去年: no classes
    assert weights and abs(sum(weights.values()) - 1.0) < 1e-9


def test_a_turn_that_names_a_member_of_the_asked_class_is_found(tmp_path):
    memory = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, cjk_vector_weight=0.0
    )
    memory.add_messages("ns", _story())
    memory.flush("ns")
    first = [h.message_ids[0] for h in memory.search("ns", "她在练哪种乐器？", 3)]
    assert first[0] == "cello"
    assert "stage" in [h.message_ids[0] for h in memory.search("ns", "第一次演出是什么时候？", 3)]
    without = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, concept_weight=0.0
    )
    assert "cello" not in [i for h in without.search("ns", "她在练哪种乐器？", 10) for i in h.message_ids]
    memory.close()
    without.close()


def test_concepts_come_from_the_stored_words_so_older_stores_get_them_on_open(tmp_path):
    """Nothing new is stored: the classes are derived from each message's stored terms when a
    namespace is loaded, so a store written before them (same rows) finds the class on reopen."""
    memory = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, cjk_vector_weight=0.0
    )
    memory.add_messages("ns", _story())
    memory.flush("ns")
    stored = [json.loads(t) for (t,) in memory._store.query("SELECT terms FROM blocks WHERE ns='ns'")]
    assert not any(term.startswith("~") for s in stored for m in s["messages"] for term in m)
    memory.close()
    reopened = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, cjk_vector_weight=0.0
    )
    assert reopened.search("ns", "她在练哪种乐器？", 1)[0].message_ids == ["cello"]
    reopened.close()


def test_the_turn_after_a_question_takes_more_of_its_words(tmp_path):
    """'最喜欢吃什么?' — the answer ('说实话是红油抄手') shares no word; the question before it does.

    A turn beside that question with a word of its own ('我喜欢下雨天') ranks above the answer when
    every neighbour counts alike (`answer_weight` = `window_weight`), below it by default.
    """
    msgs = []
    for i in range(30):
        msgs.append(
            HumanMessage(f"今天又下雨了，咖啡喝了第{i}杯。", id=f"f{i}", additional_kwargs=_at(10 * i))
        )
        msgs.append(AIMessage("哈哈，我也是。", id=f"r{i}", additional_kwargs=_at(10 * i + 1)))
    msgs[20:20] = [
        HumanMessage("我刚从成都回来，玩得很开心。", id="trip", additional_kwargs=_at(101)),
        AIMessage("我喜欢下雨天，你呢？", id="other", additional_kwargs=_at(102)),
        HumanMessage("好吧。那边你最喜欢哪一部分？", id="ask", additional_kwargs=_at(103)),
        AIMessage("说实话是红油抄手，我每天都去那家店。", id="food", additional_kwargs=_at(104)),
    ]
    memory = BlockMemory(  # char_weight off: 喜/欢 of 'other' would add to the word 喜欢 (this pins the answer rule)
        tmp_path,
        DeterministicFakeEmbedding(size=16),
        vector_weight=0.0,
        cjk_vector_weight=0.0,
        char_weight=0.0,
    )
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    state = memory._state("ns")
    with state.lock:
        asking = set(state.unit_seq.values()) & state.asking
    assert len(asking) == 2  # 'other' and 'ask' ask something
    question = "她最喜欢吃什么？"
    ranked = [h.message_ids[0] for h in memory.search("ns", question, 4)]
    assert ranked[0] == "ask" and ranked.index("food") < ranked.index("other")
    flat = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, answer_weight=0.5)
    ranked = [h.message_ids[0] for h in flat.search("ns", question, 4)]
    assert ranked.index("other") < ranked.index("food")
    memory.close()
    flat.close()


def test_a_store_written_before_questions_were_marked_still_opens_and_searches(tmp_path):
    memory = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, cjk_vector_weight=0.0
    )
    memory.add_messages("ns", _story())
    memory.flush("ns")
    rows = memory._store.query("SELECT block_id, terms FROM blocks WHERE ns='ns'")
    with memory._store.transaction() as conn:  # the format before `asks` was kept
        for block_id, terms in rows:
            stored = json.loads(terms)
            del stored["asks"]
            conn.execute(
                "UPDATE blocks SET terms=? WHERE ns='ns' AND block_id=?", (json.dumps(stored), block_id)
            )
    memory.close()
    again = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, cjk_vector_weight=0.0
    )
    assert not again._state("ns").asking
    assert again.search("ns", "她在练哪种乐器？", 1)[0].message_ids == ["cello"]
    again.close()


def test_where_questions_ask_for_a_place_name(tmp_path):
    """'去年三月去哪里旅行了?' — the trip turn names a city and no word of the question."""
    msgs = []
    for i in range(60):
        at = {"created_at": (START + timedelta(days=3 * i)).isoformat()}
        msgs.append(HumanMessage("今天又下雨了，咖啡喝了好几杯。", id=f"f{i}", additional_kwargs=at))
        msgs.append(AIMessage("哈哈，我也是。", id=f"r{i}", additional_kwargs=at))
    trip_at = {"created_at": (START + timedelta(days=3 * 10, hours=1)).isoformat()}  # March 2025
    msgs.insert(21, HumanMessage("跟你说，我刚从青岛回来。", id="trip", additional_kwargs=trip_at))
    memory = BlockMemory(
        tmp_path, DeterministicFakeEmbedding(size=16), vector_weight=0.0, cjk_vector_weight=0.0
    )
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    question = "她2025年3月去哪里旅行了？"
    assert memory.search("ns", question, 1)[0].message_ids == ["trip"]
    off = BlockMemory(
        tmp_path,
        DeterministicFakeEmbedding(size=16),
        vector_weight=0.0,
        cjk_vector_weight=0.0,
        answer_classes=0.0,
    )
    assert "trip" not in [h.message_ids[0] for h in off.search("ns", question, 3)]
    memory.close()
    off.close()


def test_the_word_a_question_word_asks_about_names_the_answers_class():
    """'哪些城市' / '哪种乐器': that word's class weighs `answer_classes` more; measure words are skipped."""
    skip = frozenset({"哪些", "哪", "种", "什么"})
    plain = query_concepts(["城市", "旅行"], skip, 1.0)
    asked = query_concepts(["哪些", "城市", "旅行"], skip, 1.0)
    assert asked["~Cb25A"] == plain["~Cb25A"] + 1.0 and asked["~Hf04A"] == plain["~Hf04A"]
    assert query_concepts(["哪", "种", "乐器"], skip, 1.0)["~Bp13A"] == 2.0
    assert query_concepts(["哪", "种", "乐器"], skip, 0.0)["~Bp13A"] == 1.0  # answer_classes=0: off
    assert query_concepts(["什么"], skip, 1.0) == {}  # nothing asked about


def test_which_cities_finds_the_trips_before_talk_of_travelling(tmp_path):
    msgs = []
    for i in range(40):
        at = {"created_at": (START + timedelta(days=3 * i)).isoformat()}
        talk = "我表妹下个月要去旅行。" if i % 4 == 1 else "今天又下雨了，咖啡喝了好几杯。"  # 10 of 40
        msgs.append(HumanMessage(talk, id=f"f{i}", additional_kwargs=at))
        msgs.append(AIMessage("哈哈，我也是。", id=f"r{i}", additional_kwargs=at))
    msgs.insert(
        21,
        HumanMessage("跟你说，我刚从青岛回来。", id="qingdao", additional_kwargs=msgs[20].additional_kwargs),
    )
    msgs.insert(
        61,
        HumanMessage("上礼拜我在厦门玩了一周。", id="xiamen", additional_kwargs=msgs[60].additional_kwargs),
    )
    found = {}
    for weight in (1.0, 0.0):
        memory = BlockMemory(
            tmp_path / str(weight), DeterministicFakeEmbedding(size=16), vector_weight=0.0,
            cjk_vector_weight=0.0, answer_classes=weight, category_classes=0.0,  # 城市 names a class too
            char_weight=0.0,  # 旅/行 would add to the word 旅行 the small talk shares (this pins the class)
        )  # fmt: skip
        memory.add_messages("ns", msgs)
        memory.flush("ns")
        found[weight] = [h.message_ids[0] for h in memory.search("ns", "她都去过哪些城市旅行？", 2)]
        memory.close()
    assert found[1.0][0] in ("qingdao", "xiamen")  # a city the trip names, though no word is asked
    assert not {"qingdao", "xiamen"} & set(found[0.0])  # without it: the talk of travelling


def test_a_word_that_names_an_upper_class_reaches_its_members():
    """词林's upper levels are named ('Bi' = 动物): a question's 动物 reaches 狗 and 猫, which sit under
    it, though 动物 itself sits in another group (Ba02A, 生物); time classes (Ca) are never used."""
    animals = set(category_groups("动物"))
    assert {"Bi07B", "Bi08A"} <= animals and "Ba02A" not in animals
    assert category_groups("时间") == () and category_groups("猫") == ()  # Ca; a single character
    weights = query_concepts(["新", "养", "小", "动物", "叫", "什么"], frozenset({"什么"}), 1.0, 2.0)
    assert weights["~Bi08A"] == 2.0 and weights["~Ba02A"] == 1.0  # members, and the word's own group
    assert "~Bi08A" not in query_concepts(["小", "动物"], frozenset(), 1.0, 0.0)  # categories off


def test_a_question_about_a_kind_of_thing_finds_the_turn_naming_a_member(tmp_path):
    """'她新养的小动物叫什么？' — the turn says 兔子, not 动物; small talk shares its other words (新, 叫)."""
    msgs = []
    for i in range(40):
        talk = "新的那家店叫啥？" if i % 4 == 1 else "今天又下雨了，咖啡喝了好几杯。"  # 10 of 40
        msgs.append(HumanMessage(talk, id=f"f{i}", additional_kwargs=_at(10 * i)))
        msgs.append(AIMessage("哈哈，我也不记得。", id=f"r{i}", additional_kwargs=_at(10 * i + 1)))
    msgs.insert(41, HumanMessage("我们新接回一只兔子，名字叫团子。", id="cat", additional_kwargs=_at(201)))
    found = {}
    for weight in (2.0, 0.0):
        memory = BlockMemory(
            tmp_path / str(weight), DeterministicFakeEmbedding(size=16), vector_weight=0.0,
            cjk_vector_weight=0.0, category_classes=weight,
        )  # fmt: skip
        memory.add_messages("ns", msgs)
        memory.flush("ns")
        found[weight] = [h.message_ids[0] for h in memory.search("ns", "她新养的小动物叫什么？", 3)]
        memory.close()
    assert found[2.0][0] == "cat"
    assert found[0.0][0] != "cat"  # without the category: the talk that shares more words
