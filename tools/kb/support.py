"""Is a model-written knowledge answer supported by the passages it cites? A measured check.

Each sentence of the answer that says something is compared with the passages it cites (a
sentence without a citation with the passages the answer cites elsewhere): its content terms —
CJK character pairs, English words of three letters or more, and numbers — are looked up in
those passages. A sentence is supported when at least `SENTENCE_THRESHOLD` of its terms occur
there and every number it states does; the answer is supported when every such sentence is and
it cites at least one passage. Boilerplate ("根据资料", "according to the sources") is ignored.

Measured on a development split and reported on a test split of good and gibberish answers over
the shipped notes: `python -m bench.kb_support` (numbers in docs/model-mode.md). Any agent path
that shows a model's answer with citations can call `answer_support`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["SENTENCE_THRESHOLD", "Support", "answer_support", "content_terms"]

SENTENCE_THRESHOLD = 0.5  # chosen on the development split (bench/kb_support.py)

_CITATION = re.compile(r"\[(\d{1,2})\]")
_SENTENCE = re.compile(r"[^。！？!?\n；;]+(?:[。！？!?；;]|\.(?=\s|$)|$)")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_WORD = re.compile(r"[a-z][a-z\-]{2,}")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_BOILERPLATE = re.compile(
    r"根据(?:检索到的|以上|上述)?(?:资料|内容|信息|文档)|资料(?:显示|中提到|指出|表明)|参考来源|综上所述|总之|简单来说|也就是说"
    r"|according to (?:the )?(?:sources?|documents?|passages?)|in summary|参考|来源",
    re.I,
)
_STOPWORDS = frozenset(
    "the and for are was were this that with from have has not but can will its also which their they "
    "you your our there been into more than such these those when what where how about only".split()
)


@dataclass(frozen=True)
class Support:
    """The verdict on an answer: supported or not, the weakest sentence's score, every checked sentence."""

    supported: bool
    score: float
    sentences: tuple[tuple[str, float], ...]


def content_terms(text: str) -> set[str]:
    """CJK character pairs, English words (3+ letters, no stopwords) and numbers of `text`."""
    text = _BOILERPLATE.sub(" ", _CITATION.sub(" ", text.lower()))
    terms = {w for w in _WORD.findall(text) if w not in _STOPWORDS}
    terms |= set(_NUMBER.findall(text))
    for run in _CJK_RUN.findall(text):
        terms |= {run[i : i + 2] for i in range(len(run) - 1)} if len(run) > 1 else {run}
    return terms


def _score(sentence: str, source: str, source_terms: set[str]) -> float:
    terms = content_terms(sentence)
    if not terms:
        return 1.0
    numbers = set(_NUMBER.findall(_CITATION.sub(" ", sentence)))
    if any(n not in source for n in numbers):
        return 0.0  # a figure the cited passages do not state
    return len(terms & source_terms) / len(terms)


def answer_support(
    answer: str, passages: Mapping[int, str], threshold: float = SENTENCE_THRESHOLD
) -> Support:
    """Whether `answer` is supported by the passages it cites (`passages`: source number -> text)."""
    body = answer.split("参考来源：")[0]
    cited_anywhere = sorted({int(n) for n in _CITATION.findall(body) if int(n) in passages})
    if not cited_anywhere:
        return Support(False, 0.0, ())
    checked = []
    for sentence in (s.strip() for s in _SENTENCE.findall(body)):
        if len(content_terms(sentence)) < 2:
            continue  # "我不知道。", a heading, a lone citation
        cited = [int(n) for n in _CITATION.findall(sentence) if int(n) in passages] or cited_anywhere
        source = "\n".join(passages[n] for n in cited).lower()
        checked.append((sentence, _score(sentence, source, content_terms(source))))
    if not checked:
        return Support(False, 0.0, ())
    weakest = min(score for _, score in checked)
    return Support(weakest >= threshold, weakest, tuple(checked))
