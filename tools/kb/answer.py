"""Turn ranked knowledge passages into a cited answer, or an honest "我不知道".

Offline the answer is extractive: the sentences of each source that share the most terms with the
question, each tagged with its source number. With a chat model the model writes the answer from
the same numbered passages (prompt from seeds/001), and its citations are checked against them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from tools.kb.search import KbHit

__all__ = ["KB_ANSWER_PROMPT", "answer_with_model", "cite_sources", "extractive_answer", "not_found_answer"]

KB_ANSWER_PROMPT = """你是光伏投资领域的政策、并网与运维知识助手。请只根据用户消息中检索到的资料回答问题，不要编造资料以外的内容。
如果资料中没有答案，请只回答“我不知道”。
请在回答中用资料编号注明来源，如 [1][3]。"""

_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")
_CITATION = re.compile(r"\[(\d{1,2})\]")
_MAX_SENTENCES = 2


def cite_sources(hits: Sequence[KbHit], lang: str = "zh") -> str:
    """The numbered source list that ends every answer (in English: each document's English title first)."""
    if lang == "en":
        lines = [
            f"[{i}] {_english(h)[0] + ' — ' if _english(h)[0] else ''}《{h.passage.title}》, {h.passage.source}"
            for i, h in enumerate(hits, 1)
        ]
        return "Sources:\n" + "\n".join(lines)
    lines = [f"[{i}] 《{h.passage.title}》，{h.passage.source}" for i, h in enumerate(hits, 1)]
    return "参考来源：\n" + "\n".join(lines)


def _english(hit: KbHit) -> tuple[str, str]:
    """A document's English title and summary (its `English:` line), or ("", "")."""
    title, _, summary = hit.passage.english.partition("|")
    return (title.strip(), summary.strip()) if summary else ("", title.strip())


def extractive_answer(
    question: str, weights: Mapping[str, float], hits: Sequence[KbHit], lang: str = "zh"
) -> str:
    """The sentences of each source richest in the question's (IDF-weighted) terms, tagged [n].

    Asked in English, a source with an English summary is quoted by that summary (offline there
    is no translation); one without is quoted in its own language, and the answer says so.
    """
    if lang == "en":
        return _english_answer(question, weights, hits)
    lines = [f"- {_best_sentences(hit, weights)}[{i}]" for i, hit in enumerate(hits, 1)]
    return f"关于“{question}”，知识库中的相关说明如下：\n" + "\n".join(lines) + "\n\n" + cite_sources(hits)


def _english_answer(question: str, weights: Mapping[str, float], hits: Sequence[KbHit]) -> str:
    lines = []
    untranslated = False
    for i, hit in enumerate(hits, 1):
        summary = _english(hit)[1]
        untranslated |= not summary
        lines.append(f"- {summary or _best_sentences(hit, weights)}[{i}]")
    head = f"On “{question}”, the knowledge base says (its documents are in Chinese; English summaries):"
    note = "\n(Sources without an English summary are quoted in their own language.)" if untranslated else ""
    return head + "\n" + "\n".join(lines) + note + "\n\n" + cite_sources(hits, "en")


def _best_sentences(hit: KbHit, weights: Mapping[str, float]) -> str:
    """The (at most two) sentences of a passage richest in the question's terms, in text order."""
    sentences = [s.strip() for s in _SENTENCE.findall(hit.passage.text) if s.strip()]
    scored = [(sum(w for t, w in weights.items() if t in s.lower()), pos) for pos, s in enumerate(sentences)]
    best = sorted(
        pos for score, pos in sorted(scored, key=lambda sp: (-sp[0], sp[1]))[:_MAX_SENTENCES] if score > 0
    )
    return "".join(_closed(sentences[pos]) for pos in best) or _closed(
        sentences[0] if sentences else hit.passage.title
    )


def _closed(sentence: str) -> str:
    """A sentence ending in a full stop (clauses cut at "；" or "：" read as complete)."""
    sentence = sentence.rstrip("；;，,：: ")
    if sentence.endswith(("。", "！", "？", "!", "?")):
        return sentence
    return sentence if sentence.endswith(".") and sentence[-2:-1].isascii() else sentence + "。"


def not_found_answer(question: str, terms: Sequence[str], documents: int, lang: str = "zh") -> str:
    """Say "我不知道" ("I don't know"), with what was searched and how to add documents."""
    if lang == "en":
        words = ", ".join(terms) if terms else "no usable keywords"
        return (
            f"I don't know. I searched the {documents} documents of the knowledge base for “{question}” "
            f"(keywords: {words}) and found nothing relevant enough. plangraph answers PV investment "
            "questions (economics, sensitivity, reverse optimisation, reports) and PV policy questions from "
            "its knowledge base; try rephrasing, or add your own documents (PDF, Word, HTML, Markdown, text, "
            "CSV) to the knowledge base with `plangraph kb add` or the /kb API."
        )
    keywords = "、".join(terms) if terms else "（无有效关键词）"
    return (
        f"我不知道。我在知识库的 {documents} 篇文档中检索了“{question}”（关键词：{keywords}），"
        "没有找到足够相关的内容。plangraph 能做光伏投资测算（经济性、敏感性分析、反向优化、报告），"
        "并根据知识库回答光伏政策、并网与运维问题；您可以换个说法再问，或把自己的资料（PDF、Word、HTML、"
        "Markdown、文本、CSV）用 `plangraph kb add` 或 /kb 接口加入知识库后再试。"
    )


def answer_with_model(
    model: BaseChatModel,
    question: str,
    hits: Sequence[KbHit],
    prompt: Callable[[str, str], list[BaseMessage]],
) -> tuple[str, list[int]] | None:
    """The model's answer with only valid citations kept, and the source numbers it cited.

    `cited == []` means the model said "我不知道" from these sources. None means the model cited
    none of them without saying so; the caller then falls back to the extractive answer.
    """
    material = "\n\n".join(
        f"[{i}] 《{h.passage.title}》（来源：{h.passage.source}）\n{h.passage.text}"
        for i, h in enumerate(hits, 1)
    )
    # `prompt` (StepContext.prompt: the agent's disclosed memory window, ending with this request)
    # lets a follow-up question see the earlier exchange within the token budget.
    reply = model.invoke(prompt(KB_ANSWER_PROMPT, f"检索内容：\n{material}\n\n问题：{question}"))
    text = reply.text.strip()
    valid = range(1, len(hits) + 1)
    cited = sorted({int(n) for n in _CITATION.findall(text) if int(n) in valid})
    if not cited:
        return (text, []) if "我不知道" in text else None
    return _CITATION.sub(lambda m: m.group(0) if int(m.group(1)) in valid else "", text), cited
