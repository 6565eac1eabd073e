"""Short chat turns (round 8): characters of Chinese words, corrections, question words, mixed dates."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.chat_cues import char_terms, corrects, query_chars
from memory.text import QUESTION_WORDS, search_terms
from memory.when import time_span

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def _at(minutes: float) -> dict:
    return {"created_at": (START + timedelta(minutes=minutes)).isoformat()}


def _memory(tmp_path, **settings) -> BlockMemory:
    """Lexical search only (hash vectors are noise), with the given settings."""
    base = {"vector_weight": 0.0, "cjk_vector_weight": 0.0}
    return BlockMemory(tmp_path, DeterministicFakeEmbedding(size=16), **{**base, **settings})


def _filler(n: int, start: float = 0.0) -> list:
    """Chat that shares no character with the questions below."""
    lines = ["刚下班，累死了", "哈哈哈", "晚饭吃了面条", "地铁人好挤", "你周末干嘛", "在家躺着呢"]
    return [
        (HumanMessage if i % 2 == 0 else AIMessage)(
            lines[i % len(lines)], id=f"f{start + i:g}", additional_kwargs=_at(start + i)
        )
        for i in range(n)
    ]


def _ids(memory: BlockMemory, query: str, k: int) -> list[str]:
    return [i for h in memory.search("ns", query, k) for i in h.message_ids]


def test_char_terms_are_the_distinct_characters_of_chinese_words_without_grammar_characters():
    assert char_terms(search_terms("婚宴订在老家的酒店")) == [
        "婚",
        "宴",
        "老",
        "家",
        "酒",
        "店",
    ]  # 订: one character
    assert char_terms(["hello", "2025", "岔"]) == []  # single characters are often pieces of unknown words
    assert char_terms(["我们", "这个"]) == []  # grammar characters say nothing of a topic
    # a question's words that only ask (什么, 多少) give no characters
    assert query_chars(search_terms("他们在什么地方结婚？"), QUESTION_WORDS) == ["方", "结", "婚"]


def test_a_turn_sharing_only_a_rare_character_with_the_question_is_found(tmp_path):
    """'在哪结婚' — '婚宴订在老家的酒店' shares no word (结婚 / 婚宴) but the rare character 婚."""
    msgs = _filler(60)
    msgs.insert(31, HumanMessage("婚宴订在老家的酒店", id="wedding", additional_kwargs=_at(30.5)))
    memory = _memory(tmp_path, char_weight=0.3)
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    assert _ids(memory, "他们打算在哪结婚？", 3)[0] == "wedding"
    without = _memory(tmp_path, char_weight=0.0)
    assert "wedding" not in _ids(without, "他们打算在哪结婚？", 10)
    memory.close()
    without.close()


def test_characters_come_from_the_stored_words_so_older_stores_get_them_on_open(tmp_path):
    msgs = _filler(20)
    msgs.insert(11, HumanMessage("婚宴订在老家的酒店", id="wedding", additional_kwargs=_at(10.5)))
    memory = _memory(tmp_path)
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    stored = [json.loads(t) for (t,) in memory._store.query("SELECT terms FROM blocks WHERE ns='ns'")]
    assert not any(term == "婚" for s in stored for m in s["messages"] for term in m)  # nothing new stored
    memory.close()
    reopened = _memory(tmp_path, char_weight=0.3)
    assert _ids(reopened, "在哪结婚？", 1) == ["wedding"]
    reopened.close()


def test_corrections_are_recognised_in_chinese_and_english():
    for text in ("说错了，牙医是下周一，我看错短信了", "啊，是15号，我看岔了", "sorry，是20:40的，我记成去程了",
                 "wait no, I misread the email, it's Thursday", "typo: 7pm not 6pm"):  # fmt: skip
        assert corrects(search_terms(text)), text
    for text in (
        "这家店不错",
        "错过了末班车",
        "牙医约在周三上午",
        "I signed the contract",
        "what did you mean",
    ):
        assert not corrects(search_terms(text)), text


def test_a_correction_is_found_through_the_statement_it_corrects(tmp_path):
    """'体检约在周三' then, two turns later, '不好意思说错了，是周五，我看错短信了': the correction shares
    no word with '体检是哪天' but is the newest statement of the date, so it follows the first one."""
    msgs = _filler(40)
    for i in (5, 12, 30):  # other talk of check-ups, each sharing 体检 with the question
        msgs.insert(
            i,
            AIMessage(
                f"我们公司今年的体检套餐又换了第{i}家机构", id=f"other{i}", additional_kwargs=_at(i - 0.5)
            ),
        )
    msgs[22:22] = [
        HumanMessage("体检约在周三上午", id="said", additional_kwargs=_at(19.1)),
        AIMessage("好的，记得空腹", id="reply", additional_kwargs=_at(19.2)),
        HumanMessage("不好意思说错了，是周五，我看错短信了", id="fix", additional_kwargs=_at(19.3)),
    ]
    memory = _memory(tmp_path, correction_weight=1.0)
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    assert set(_ids(memory, "体检是哪天？", 2)) == {"said", "fix"}
    without = _memory(tmp_path, correction_weight=0.0)
    assert "fix" not in _ids(without, "体检是哪天？", 4)
    memory.close()
    without.close()


def test_question_words_weigh_less_than_the_words_of_the_topic(tmp_path):
    """'今天吃什么' shares only the question word 什么 with '养了什么宠物'; with question words at a
    lower weight the turn that names the topic (宠物) ranks above it."""
    msgs = _filler(30)
    msgs[10:10] = [
        HumanMessage("今天吃什么", id="what", additional_kwargs=_at(9.1)),
        HumanMessage("楼下宠物店的小猫好可爱，可是养不起", id="pet", additional_kwargs=_at(9.2)),
    ]
    memory = _memory(tmp_path, question_weight=0.3, window_weight=0.0, window_weight2=0.0, char_weight=0.0)
    memory.add_messages("ns", msgs)
    memory.flush("ns")
    assert _ids(memory, "她养了什么宠物？", 1) == ["pet"]
    full = _memory(tmp_path, question_weight=1.0, window_weight=0.0, window_weight2=0.0, char_weight=0.0)
    assert _ids(full, "她养了什么宠物？", 1) == ["what"]  # the short turn wins on one common word
    memory.close()
    full.close()


def test_dates_of_the_other_language_inside_a_question_are_read():
    ref = datetime(2025, 9, 1, tzinfo=UTC).timestamp()

    def days(query: str) -> tuple[str, str] | None:
        span = time_span(query, ref)
        return (
            None if span is None else tuple(datetime.fromtimestamp(x, UTC).date().isoformat() for x in span)
        )  # type: ignore[return-value]

    assert days("小林在February 2025去了哪？") == ("2025-02-01", "2025-03-01")
    assert days("苏苏在December 2023看了哪套房？") == ("2023-12-01", "2024-01-01")
    assert days("静静在2025-06看了哪套房？") == ("2025-06-01", "2025-07-01")
    assert days("what happened on 2024/11/03") == ("2024-11-03", "2024-11-04")
    assert days("Which restaurant did Hana try in 2024年12月?") == ("2024-12-01", "2025-01-01")
    assert days("Omar said dismay") is None  # month names only as whole words
    assert days("call 2025-13 or 1999-00") is None
