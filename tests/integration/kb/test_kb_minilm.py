"""Retrieval quality of the shipped knowledge base with the real parts: MiniLM + Chroma on disk.

The question set below is the measurement behind the numbers in the kb report:
  .venv/bin/pytest -q tests/integration/kb -s   (prints top-1 / top-3 / rejected counts)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.embeddings import default_embeddings
from tools.kb.corpus import SHIPPED_KB_DIR
from tools.kb.index import KnowledgeIndex
from tools.kb.search import RankerSettings

# English questions in everyday words the (Chinese) notes do not use, and near-domain questions
# no note answers (bench/kb_relevance.py picks the summary floor on their dev split)
LAY = [
    json.loads(line)
    for line in (Path(__file__).parents[2] / "unit" / "kb" / "data" / "english_paraphrases.jsonl")
    .read_text("utf-8")
    .splitlines()
    if line.strip()
]

# question → file-name prefix of the document that answers it
GOLDEN = [
    ("一般工商业分布式光伏还能选全额上网吗", "02_"),
    ("分布式光伏分为哪几类", "01_"),
    ("大型工商业分布式光伏的装机容量上限是多少", "01_"),
    ("2025年5月1日之前并网的项目按什么政策执行", "03_"),
    ("136号文的机制电价是什么意思", "04_"),
    ("新能源上网电量要全部进入电力市场吗", "04_"),
    ("现在新建工商业光伏还有国家补贴吗", "05_"),
    ("浙江的燃煤基准价是多少", "06_"),
    ("峰谷电价价差有什么要求", "07_"),
    ("代理购电价格是怎么回事", "08_"),
    ("整县推进对厂房屋顶的比例要求", "09_"),
    ("并网要交费吗，接入方案收费吗", "10_"),
    ("分布式光伏并网流程是怎样的", "11_"),
    ("400千瓦的项目接入什么电压等级", "12_"),
    ("防孤岛保护动作时间要求", "12_"),
    ("国内有净计量政策吗", "13_"),
    ("What is NEM 3.0 in California?", "14_"),
    ("一个绿证对应多少电量", "15_"),
    ("分布式光伏0.42元补贴是哪一年的政策", "16_"),
    ("三类资源区合理利用小时数是多少", "17_"),
    ("光伏项目企业所得税有优惠吗", "18_"),
    ("太阳能资源很丰富是多少辐射量", "19_"),
    ("单晶组件首年衰减率不能超过多少", "20_"),
    ("组件多久清洗一次，积灰损失多少", "21_"),
    ("怎么检测热斑", "22_"),
    ("PR系统效率一般是多少", "23_"),
    ("彩钢瓦屋顶装光伏要做荷载复核吗", "24_"),
    ("户用光伏需要备案吗", "25_"),
    ("3000平方米屋顶能装多少千瓦", "26_"),
    ("发电量怎么估算", "27_"),
    ("LCOE是什么", "28_"),
    ("内部收益率和投资回收期怎么理解", "29_"),
]
UNRELATED = [
    "明天杭州天气怎么样",
    "如何做红烧肉",
    "火星上的光伏补贴是多少",
    "比特币挖矿电价多少",
    "风电机组叶片怎么维修",
    "Python怎么读取Excel文件",
    "我国新能源汽车购置税减免政策",
    "核电站的安全标准",
    "What is the capital of France?",
    "光伏组件的回收处理政策",
]


@pytest.fixture(scope="module")
def kb_data(tmp_path_factory):
    return tmp_path_factory.mktemp("kb")


@pytest.fixture(scope="module")
def index(kb_data):
    built = KnowledgeIndex(kb_data, [SHIPPED_KB_DIR], default_embeddings())
    assert built.refresh().added >= 20
    return built


def test_golden_questions_find_the_answering_document(index):
    top1 = top3 = 0
    for question, expected in GOLDEN:
        hits = index.search(question, k=3)
        names = [Path(h.passage.doc_key).name for h in hits]
        assert hits[0].relevant, f"{question!r} was judged unanswerable: {names}"
        top1 += names[0].startswith(expected)
        top3 += any(n.startswith(expected) for n in names)
    print(f"\nkb retrieval (MiniLM + BM25): top-1 {top1}/{len(GOLDEN)}, top-3 {top3}/{len(GOLDEN)}")
    assert top3 == len(GOLDEN)
    assert top1 >= len(GOLDEN) - 3


def test_unrelated_questions_are_not_answered_from_nearby_documents(index):
    judged_relevant = [q for q in UNRELATED if index.search(q, k=1)[0].relevant]
    print(
        f"\nkb rejection: {len(UNRELATED) - len(judged_relevant)}/{len(UNRELATED)} unrelated questions → 我不知道"
    )
    assert judged_relevant == []


def test_reopening_the_data_dir_reuses_stored_vectors(index, kb_data):
    reopened = KnowledgeIndex(kb_data, [SHIPPED_KB_DIR], default_embeddings())
    report = reopened.refresh()
    assert not report.changed and report.unchanged == index.size
    assert Path(reopened.search("一个绿证对应多少电量", k=1)[0].passage.doc_key).name.startswith("15_")


def _cited(index: KnowledgeIndex, question: str) -> list[str]:
    return [Path(h.passage.doc_key).name for h in index.search(question, k=3) if h.relevant]


def test_english_questions_in_everyday_words_reach_notes_through_their_english_summaries(index):
    answerable = [row for row in LAY if row["note"]]
    answered = [row["id"] for row in answerable if row["note"] in _cited(index, row["question"])]
    wrongly = [row["question"] for row in LAY if not row["note"] and _cited(index, row["question"])]
    print(f"\nkb lay English: {len(answered)}/{len(answerable)} answered, {len(wrongly)} near-domain cited")
    assert wrongly == []
    # measured 36/58 with a middling summary answering when some of the question's words agree
    # (27/58 with the summary floor alone at 0.5, which a dev question about wire gauges forced)
    assert len(answered) >= 0.55 * len(answerable)


def test_without_the_summaries_the_same_questions_mostly_go_unanswered(kb_data):
    no_summaries = RankerSettings(min_summary=1.01, near_summary=1.01)
    blind = KnowledgeIndex(kb_data, [SHIPPED_KB_DIR], default_embeddings(), no_summaries)
    blind.refresh()
    answerable = [row for row in LAY if row["note"]]
    answered = [row for row in answerable if row["note"] in _cited(blind, row["question"])]
    assert len(answered) < 0.3 * len(answerable)


def test_questions_the_notes_do_not_answer_get_no_citation_though_a_note_mentions_their_words(index):
    # the inspection note mentions cables ("电缆接头") and panels; none says how to size a cable
    assert _cited(index, "What size cable do I need between the panels and the inverter?") == []
    assert _cited(index, "光伏电缆截面积怎么选") == []
    # the same words asked about what the notes do say are answered
    assert "22_inspection_hotspot.md" in _cited(index, "光伏电站日常巡检要检查哪些地方")
