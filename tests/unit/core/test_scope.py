"""Scope, language and fact questions (session 11), with the real agents; phrasings written for these tests."""

from __future__ import annotations

import pytest

from nodes.agents import agents
from nodes.agents.knowledge import _candidates
from nodes.planner import route_index
from nodes.understand import understand
from tools.lang import detect_language
from tools.results import InMemoryResults

SPECS = {name: spec for name, spec in agents().items() if spec.offline}
INDEX = route_index(SPECS)


def _found(text: str):
    return understand(text, SPECS, INDEX, InMemoryResults())


@pytest.mark.parametrize(
    "text",
    [
        "下个月去昆明旅游，那边太阳大不大",  # a city beside a word of the report's examples ("出")
        "南宁今天会不会停电",
        "Will the sun be out in Xiamen for the marathon?",
        "单位发的过节费要不要算进工资",  # a company ("单位") is no project without a word the agents use
    ],
)
def test_small_talk_naming_a_place_or_an_employer_is_out_of_scope(text):
    found = _found(text)
    assert not found.steps and not found.matched and found.reply


@pytest.mark.parametrize(
    "text",
    [
        "Would solar panels on our warehouse roof pay off?",  # a building beside the domain's words
        "福州的光伏项目，测算一下",
        "南京工商业800kW",
    ],
)
def test_a_project_is_still_the_calculations(text):
    assert [s["agentName"] for s in _found(text).steps] == ["pv_calc"]


@pytest.mark.parametrize(
    "text",
    [
        "Which manufacturer's inverter has the best after-sales service?",
        "光伏组件哪个厂家的质保最靠谱",
    ],
)
def test_a_fact_question_in_the_corpus_words_goes_to_the_knowledge_agent(text):
    # no number, no figure of the calculation, and more of its words are the notes' than the
    # calculation's: the knowledge agent answers or says it does not know — no PV inputs are asked
    assert [s["agentName"] for s in _found(text).steps] == ["knowledge"]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("帮我看看 Hefei High-tech Zone 那个工商业屋顶的 IRR", "zh"),  # names borrowed into Chinese
        ("请算一下 commercial rooftop 在 Shenzhen Nanshan 的收益", "zh"),
        ("What would a 户用 array earn in 杭州?", "en"),
        ("Hangzhou Yuhang?", "en"),  # a name opening a sentence still counts
    ],
)
def test_the_language_mainly_written_decides_and_names_do_not(text, lang):
    assert detect_language(text) == lang


class _Ctx:
    """The few StepContext fields `_candidates` reads."""

    def __init__(self, query: str) -> None:
        self.plan_context: dict = {}
        self.seq_no = 0
        self.user_query = query
        self.requirement = query
        self.results = InMemoryResults()


def test_the_knowledge_agent_tries_each_question_of_a_request_after_the_whole():
    assert _candidates(_Ctx("分时电价怎么算，峰谷差大吗")) == [
        "分时电价怎么算，峰谷差大吗",
        "分时电价怎么算",
        "峰谷差大吗",
    ]
    assert _candidates(_Ctx("绿证能卖吗")) == ["绿证能卖吗"]  # one question: nothing more to try


def test_a_question_stating_its_whole_project_is_the_calculations():
    # "kW" is a word of the notes' tags too; a unit is no topic, and nothing else is only the corpus's
    for text in ("What would a 9 kW array on our cottage in Hefei bring in?", "南京户用7kW一年能挣多少"):
        assert [s["agentName"] for s in _found(text).steps] == ["pv_calc"], text
    # a policy topic beside the project stays the knowledge base's
    assert [s["agentName"] for s in _found("宁波工商业1MW能不能全额上网").steps] == ["knowledge"]


def test_a_how_to_in_another_domains_words_stays_out_of_scope():
    assert not _found("How do I calculate the interest on a 300,000 yuan car loan?").steps
