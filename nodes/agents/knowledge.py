"""knowledge — policy and FAQ Q&A over the knowledge base, answers cite their sources.

Internal plan (fixed, offline): refresh the index (only new/changed files are embedded) →
hybrid search → answer from the relevant passages with [n] citations, or "我不知道" with what was
searched. Documents: the shipped `tools/kb/docs/` plus the folders of `Context.kb_dirs`
(env PLANGRAPH_KB_DIR); the index comes from the run's services (`StepContext.knowledge`).

With a model (`Context.model`) the agent is agentic: the model searches with `knowledge_search`
(and the memory and results tools) in a tool loop (docs/agents.md); its answer keeps only the
citations of passages it was shown. A loop that stops without a searched answer falls back to the
fixed plan above.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from nodes.kit.agentic import final_text
from nodes.kit.agentic_step import run_agentic
from nodes.kit.registry import AgentSpec, InputField
from nodes.kit.step import StepContext
from nodes.understand import clauses
from tools.contracts import AgentExecResult
from tools.kb.answer import answer_with_model, cite_sources, extractive_answer, not_found_answer
from tools.kb.corpus import SHIPPED_KB_DIR, read_document, scan_documents
from tools.kb.index import IndexReport, KnowledgeIndex
from tools.kb.search import KbHit
from tools.kb.support import answer_support
from tools.kb.tool import Sources, make_knowledge_tool

__all__ = ["AGENT", "AGENT_PROMPT", "ANSWER", "run"]

log = logging.getLogger("plangraph.knowledge")

ANSWER = "kb_answer"  # results-index kind of an answer (question, citations)
MAX_SOURCES = 3
_CITED = re.compile(r"\[(\d{1,2})\]")
AGENT_PROMPT = """你是光伏投资领域的政策、并网与运维知识助手。先调用 knowledge_search 检索知识库（可以换关键词多查几次），
只根据检索到的资料回答，用资料编号注明来源，如 [1][3]；资料里没有答案就如实说不知道，不要编造。
需要本对话更早的内容时用 search_block / find_results，store:// 数据用 load 读取。
只有用户才知道的信息才调用 ask_user 询问，同一个问题不要问两次。用用户的语言回答。"""
_ASK_QUESTION = "请问您想了解哪方面的问题？例如分布式光伏的上网模式、并网流程、电价与补贴政策或运维清洗。"
_ASK_QUESTION_EN = (
    "What would you like to know? For example PV grid connection modes, the connection process, "
    "tariffs and subsidies, or cleaning and maintenance."
)


def topics() -> list[str]:
    """Title and tags of every shipped note: what the planner matches knowledge questions against."""
    documents = scan_documents([SHIPPED_KB_DIR])
    passages = (p for key, path in documents.items() for p in read_document(path, key))
    return list(dict.fromkeys(f"{p.title} {p.tags}".strip() for p in passages))


def serves(services: Any, question: str) -> bool:
    """True when the knowledge base answers `question` although no agent's words matched it.

    Asked by the planner when nothing else matched: a question about the user's own (or shared)
    documents (a relevant uploaded passage), one put in words the notes do not use ("How fast
    do panels wear out?") but close in meaning to a note's English summary (`KbHit.summary` at or
    above the ranker's `min_summary`, or at `near_summary` with some of its words), or one in the
    everyday words of the questions a note says it answers ("太阳能板用久了功率会变少吗":
    `KbHit.lay_score` at or above `RankerSettings.lay_floor`). Word overlap with the notes' own
    text alone does not count here: a request that matched no agent and merely shares common words
    with a note ("公司年假") stays out of scope.
    """
    if services.knowledge is None:
        return False
    index: KnowledgeIndex = services.knowledge()
    index.refresh()
    uploaded = {p.passage_id for p in index.uploads.passages(index.owners)}
    s = index.settings
    return any(
        h.relevant
        and (
            h.passage.passage_id in uploaded
            or h.summary >= s.min_summary
            or (h.summary >= s.near_summary and h.coverage >= s.near_coverage)
            or h.lay_score(s.concept_credit, s.char_credit) >= s.lay_floor(h.passage)
        )
        for h in index.search(question, k=3)
    )


def run(ctx: StepContext) -> AgentExecResult:
    """Answer this step's question from the knowledge base, citing sources.

    With a model the model searches (tool loop, `nodes.kit.agentic_step`); offline, or when the
    loop does not end in a cited answer, the fixed internal plan answers.
    """
    if ctx.knowledge is None:
        raise RuntimeError("the knowledge agent needs StepContext.knowledge (the graph's services give it)")
    index = ctx.knowledge()
    en = ctx.language == "en"
    ctx.emit("Checking the knowledge base's documents…" if en else "正在检查知识库文档…")
    report = index.refresh()
    if report.changed:
        ctx.emit(
            f"Knowledge base updated: {report.added} added, {report.updated} updated, {report.removed} removed."
            if en
            else f"知识库已更新：新增 {report.added} 篇，更新 {report.updated} 篇，移除 {report.removed} 篇。"
        )
    candidates = _candidates(ctx)
    if not any(index.query_terms(q) for q in candidates):
        return ctx.interrupted(
            _ASK_QUESTION_EN if ctx.language == "en" else _ASK_QUESTION, missing=["question"]
        )
    if ctx.model is not None:
        sources = Sources()
        return run_agentic(
            ctx,
            AGENT_PROMPT,
            [make_knowledge_tool(index, sources)],
            lambda state: _cited(ctx, index, report, candidates[0], sources, final_text(state)),
            lambda ctx: _workflow(ctx, index, report, candidates),
        )
    return _workflow(ctx, index, report, candidates)


def _workflow(
    ctx: StepContext, index: KnowledgeIndex, report: IndexReport, candidates: list[str]
) -> AgentExecResult:
    """The fixed internal plan: search the candidates, answer from the relevant passages."""
    en = ctx.language == "en"
    ctx.emit(
        f"Searching the knowledge base ({index.size} documents)…"
        if en
        else f"正在检索知识库（{index.size} 篇文档）…"
    )
    question, hits = _search(index, candidates)
    terms = index.query_terms(question)
    sources = [h for h in hits if h.relevant][:MAX_SOURCES]
    if sources:
        ctx.emit(
            f"Found {len(sources)} relevant passages, writing the answer…"
            if en
            else f"找到 {len(sources)} 条相关资料，正在整理答案…"
        )
    text, cited = _compose(ctx, index, question, terms, sources)
    context = {
        "question": question,
        "found": bool(cited),
        "searched_terms": terms,
        "citations": [_citation(i, h) for i, h in enumerate(sources, 1) if i in cited],
        "index": _report(report, index.size),
    }
    ctx.record_tool_call("kb_search", {"query": question}, text, context)
    ctx.save_result(ANSWER, {"answer": text, **context}, {"question": question, "found": bool(cited)})
    return ctx.result("completed", text, context)


def _cited(
    ctx: StepContext, index: KnowledgeIndex, report: IndexReport, question: str, sources: Sources, text: str
) -> AgentExecResult | None:
    """The model's answer with its citations checked against the passages it was shown.

    None (the offline path answers) when the model never searched; "我不知道" when it cites no
    passage it saw.
    """
    if not sources.queries or not text:
        return None
    cited = sources.cited([int(n) for n in _CITED.findall(text)])
    terms = sorted({t for q in sources.queries for t in index.query_terms(q)})
    if cited:  # renumbered 1..k in citation order; numbers of passages never shown are dropped
        number = {old: new for new, (old, _) in enumerate(cited, 1)}
        text = _CITED.sub(lambda m: f"[{number[int(m[1])]}]" if int(m[1]) in number else "", text)
        text = f"{text}\n\n{cite_sources([h for _, h in cited], ctx.language)}"
    else:
        text = not_found_answer(question, terms, index.size, ctx.language)
    context = {
        "question": question,
        "found": bool(cited),
        "searched_terms": terms,
        "citations": [_citation(n, h) for n, (_, h) in enumerate(cited, 1)],
        "index": _report(report, index.size),
    }
    ctx.save_result(ANSWER, {"answer": text, **context}, {"question": question, "found": bool(cited)})
    return ctx.result("completed", text, context)


def _candidates(ctx: StepContext) -> list[str]:
    """Questions to try, best first.

    Newest answer, the user's words, the step requirement, the question combined with the
    previous one (a follow-up such as "那户用的呢？"), then the clauses of the first one.
    """
    answers = [str(a) for a in ctx.plan_context.get("answers", {}).get(str(ctx.seq_no), [])]
    own = [q.strip() for q in [*reversed(answers), ctx.user_query, ctx.requirement] if q and q.strip()]
    previous = ctx.results.latest(ANSWER)
    if previous and own:
        own.append(f"{previous.headline.get('question', '')} {own[0]}")
    # a request of several questions ("绿证是什么，能卖钱吗"): each part is tried after the whole, so
    # one part the notes answer is answered although the words of the others dilute the whole
    parts = [part for question in own[:1] for part in clauses(question)]
    return list(dict.fromkeys([*own, *(parts if len(parts) > 1 else [])]))


def _search(index: KnowledgeIndex, candidates: list[str]) -> tuple[str, list[KbHit]]:
    """The first candidate with a relevant hit, else the first one that has search terms."""
    first: tuple[str, list[KbHit]] | None = None
    for question in candidates:
        if not index.query_terms(question):
            continue
        hits = index.search(question, k=MAX_SOURCES + 2)
        if hits and hits[0].relevant:
            return question, hits
        first = first or (question, hits)
    assert first is not None  # run() checked that some candidate has terms
    return first


def _compose(
    ctx: StepContext, index: KnowledgeIndex, question: str, terms: list[str], sources: list[KbHit]
) -> tuple[str, list[int]]:
    """Answer text and the source numbers it cites ([] means "我不知道")."""
    if not sources:
        return not_found_answer(question, terms, index.size, ctx.language), []
    if ctx.model is not None:
        answered = answer_with_model(ctx.model, question, sources, ctx.prompt)
        if answered is not None and not answered[1]:
            return not_found_answer(question, terms, index.size, ctx.language), []
        if answered is not None:
            text, cited = answered
            # a cited [n] is not enough: the sentences must say what the cited passages say
            passages = {n: f"{sources[n - 1].passage.text}\n{sources[n - 1].passage.english}" for n in cited}
            support = answer_support(text, passages)  # the English summary counts for an English answer
            if support.supported:
                return f"{text}\n\n{cite_sources(sources, ctx.language)}", cited
            log.warning(
                "model answer not supported by its sources (score %.2f); answering extractively",
                support.score,
            )
    answer = extractive_answer(question, index.term_weights(terms), sources, ctx.language)
    return answer, list(range(1, len(sources) + 1))


def _citation(number: int, hit: KbHit) -> dict[str, Any]:
    p = hit.passage
    return {
        "n": number,
        "title": p.title,
        "source": p.source,
        # a file name, never the server's path (a user's document is keyed by its id, titled by its name)
        "file": Path(p.doc_key).name if Path(p.doc_key).is_absolute() else p.title,
        "score": round(hit.score, 4),
    }


def _report(report: IndexReport, documents: int) -> dict[str, int]:
    return {
        "documents": documents,
        "added": report.added,
        "updated": report.updated,
        "removed": report.removed,
    }


AGENT = AgentSpec(
    name="knowledge",
    description=(
        "政策与常见问题问答 policy and FAQ Q&A：分布式光伏政策、上网模式（全额上网、自发自用、余电上网）、"
        "并网流程、上网电价与燃煤基准价、分时电价、补贴与绿证、税收优惠、净计量、组件衰减、清洗与运维巡检等知识，"
        "检索知识库后回答并注明来源 [1][2]。Policy and FAQ answers with citations (grid connection, "
        "net metering, subsidies, maintenance)."
    ),
    run=run,
    examples=(
        "一般工商业分布式光伏还能选择全额上网吗？",
        "分布式光伏并网流程是怎样的？",
        "现在新建工商业光伏还有国家补贴吗？",
        "国内有没有净计量政策，余电上网怎么结算？",
        "光伏组件多久清洗一次？",
        "136号文的机制电价是什么意思？",
        "户用光伏需要备案吗？",
        "which policy applies to distributed solar grid export",
        "are there subsidies or tax breaks for solar projects",
    ),
    inputs=(InputField("question", "用户想了解的政策、并网或运维问题"),),
    vocabulary=topics,
    serves=serves,
    produces=(ANSWER,),
    tools=("kb_search",),
    internal_plan="knowledge.dot",
    agentic=True,
)
