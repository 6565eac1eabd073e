"""The knowledge base as a model-facing tool: `knowledge_search`, numbering every passage it shows.

`make_knowledge_tool(index, sources)` binds the index and a `Sources` record. Each passage shown
to the model gets one number for the whole step ([1], [2], … across searches), so the model's
answer cites them as `[n]` and the agent checks those numbers against what was really shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from tools.kb.index import KnowledgeIndex
from tools.kb.search import KbHit

__all__ = ["Sources", "make_knowledge_tool"]

_SHOWN_CHARS = 600  # passage text shown to the model per hit


@dataclass
class Sources:
    """The passages shown during one step, by citation number (1-based), and the queries searched."""

    hits: list[KbHit] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)

    def number(self, hit: KbHit) -> int:
        """The citation number of `hit` (a passage shown twice keeps its first number)."""
        for i, shown in enumerate(self.hits, 1):
            if shown.passage.passage_id == hit.passage.passage_id:
                return i
        self.hits.append(hit)
        return len(self.hits)

    def cited(self, numbers: list[int]) -> list[tuple[int, KbHit]]:
        """The shown passages among `numbers`, in citation order (unknown numbers are dropped)."""
        return [(n, self.hits[n - 1]) for n in sorted(set(numbers)) if 1 <= n <= len(self.hits)]


def make_knowledge_tool(index: KnowledgeIndex, sources: Sources, k: int = 4) -> BaseTool:
    """`knowledge_search` over `index`; every relevant passage it shows is numbered in `sources`."""

    def knowledge_search(query: str) -> str:
        """Search the PV policy / grid-connection / operations knowledge base (Chinese and English notes).

        `query`: the question or its key words. Returns numbered passages [n] with title and source;
        cite the numbers you use as [n] in your answer. Passages not marked relevant do not answer
        the question: then say you do not know instead of guessing.
        """
        if not query.strip():
            raise ToolException("query 不能为空：请给出要检索的问题或关键词。")
        sources.queries.append(query)
        hits = index.search(query, k=k)
        relevant = [h for h in hits if h.relevant]
        if not relevant:
            terms = "、".join(index.query_terms(query)) or query
            return (
                f"知识库（{index.size} 篇文档）中没有与「{query}」相关的资料（检索词：{terms}）。"
                "可以换个说法再查一次；仍然没有就如实回答不知道。"
            )
        parts = []
        for hit in relevant:
            p = hit.passage
            parts.append(f"[{sources.number(hit)}] 《{p.title}》（{p.source}）\n{p.text[:_SHOWN_CHARS]}")
        return "\n\n".join(parts)

    return StructuredTool.from_function(knowledge_search, handle_tool_error=True)
