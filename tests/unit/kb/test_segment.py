"""Segmenting with a corpus's declared terms (tools/segment.py), and memory's tokenizer left as it is."""

from __future__ import annotations

from memory.text import tokenize
from tools.kb.corpus import KbPassage
from tools.kb.search import HybridRanker
from tools.segment import TermTokenizer, declared_terms


def test_declared_terms_are_the_short_chinese_items_of_lists():
    texts = ["分布式光伏, 分类, 户用, solar PV, C&I", "组件积灰损失与清洗的长标题 运维、清洗", "工商业"]
    assert declared_terms(texts) == {"分布式光伏", "分类", "户用", "运维", "清洗", "工商业"}


def test_a_declared_term_is_cut_out_whole_and_memory_keeps_its_own_cut():
    assert "户" in tokenize("换成户用")  # jieba alone cuts the domain word apart (memory keeps that)
    segmenter = TermTokenizer(["户用", "绿证"])
    assert segmenter.tokenize("换成户用") == ["换成", "户用"]
    assert "绿证" in segmenter.tokenize("绿证是什么")
    assert "户" in tokenize("换成户用")  # the tokenizer memory uses was not touched


def test_a_long_term_also_yields_its_words_and_context_still_decides():
    segmenter = TermTokenizer(["分布式光伏", "户用"])
    assert segmenter.tokenize("分布式光伏并网")[:3] == ["分布式光伏", "分布式", "光伏"]
    # a term inside other words is not forced: 用户 + 用电, not 用 + 户用 + 电
    assert segmenter.tokenize("用户用电量") == tokenize("用户用电量")


def test_without_terms_it_is_memory_s_tokenizer():
    text = "杭州余杭区500kW工商业屋顶光伏的收益怎么样, IRR?"
    assert TermTokenizer([]).tokenize(text) == tokenize(text)


def _passage(pid: str, title: str, tags: str, text: str) -> KbPassage:
    return KbPassage(pid, f"{pid}.md", title, "test", tags, text, "sha")


def test_the_ranker_matches_a_question_by_the_notes_terms():
    notes = [
        _passage("a", "绿色电力证书", "绿证, 环境权益", "绿证是可再生能源电量环境属性的唯一证明。"),
        _passage("b", "户用光伏备案", "备案, 户用", "户用光伏由电网企业代为备案。"),
        _passage("c", "用户用电", "电价", "用户用电价格由电网企业代理购电形成。"),
    ]
    ranker = HybridRanker(notes)
    assert ranker.query_terms("绿证是什么")[0] == "绿证"
    hits = ranker.rank("绿证是什么", {}, k=3)
    assert hits[0].passage.passage_id == "a" and hits[0].relevant and hits[0].coverage == 1.0
    # stored tokens cut by memory's tokenizer (an upload) still hold the term through the text
    stored = {p.passage_id: tokenize(f"{p.title}\n{p.tags}\n{p.text}") for p in notes}
    again = HybridRanker(notes, tokens=stored).rank("户用怎么备案", {}, k=3)
    assert again[0].passage.passage_id == "b" and again[0].relevant
