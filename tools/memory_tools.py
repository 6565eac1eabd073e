"""Memory tools for agents: search_block, list_blocks, load.

The namespace (agent, user, conversation) is bound by `make_memory_tools` and never appears in a
tool's arguments, so a model cannot read another user's memory. Results are returned for the call
that asked and are not written back into memory. Mistakes the model can fix (a bad id, a page
out of range) come back as a ToolMessage error listing what is valid.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from memory import BlockMemory, UnknownDataIdError

__all__ = ["make_memory_tools", "make_todo_tool"]

_PAGE = 4000


def make_memory_tools(memory: BlockMemory, namespace: str, todo_id: str | None = None) -> list[BaseTool]:
    """The three memory tools bound to `namespace` (and `todo_id` as the default scope)."""

    def search_block(query: str, todo_id: str | None = todo_id) -> str:
        """Search this conversation's earlier messages (and your long-term notes about the user).

        Use it when the current context lacks something said or computed before.
        `query`: keywords or a question, Chinese or English; `todo_id`: limit to one sub-task.
        Returns at most 8 matching messages, best first, each with its block id, time and gist.
        """
        hits = memory.search(namespace, query, memory.settings.top_k, todo_id)
        if not hits:
            return (
                f"没有找到与「{query}」相关的历史记忆块。可以换个关键词，或先调用 list_blocks 查看有哪些块。"
            )
        parts = [
            f"[{h.block_id}] 分数 {h.score:.3f} · {h.metadata['create_time']} · {h.metadata['core_semantic']}\n{h.text}"
            for h in hits
        ]
        return "\n\n".join(parts)

    def list_blocks(todo_id: str | None = todo_id) -> str:
        """List the metadata of this conversation's memory blocks (id, type, keywords, gist, time, data ids).

        `todo_id`: limit to one sub-task. Use it to choose what to pass to search_block or load.
        """
        blocks = memory.list_blocks(namespace, todo_id)
        if not blocks:
            return "当前还没有历史记忆块。" if todo_id is None else f"子任务 {todo_id} 还没有历史记忆块。"
        return "\n".join(json.dumps(b, ensure_ascii=False) for b in blocks)

    def load(data_id: str, offset: int = 0, limit: int = _PAGE) -> str:
        """Read a stored large result by its id (store://…), one page of characters at a time.

        `offset`: first character to read (0 for the start); `limit`: characters per page.
        """
        try:
            size = memory.data_size(data_id)
            page = memory.load(data_id, offset, limit, namespace=namespace)
        except (UnknownDataIdError, ValueError) as err:
            valid = sorted({d for b in memory.list_blocks(namespace) for d in b["data_ids"]})
            hint = f"本对话可用的数据 id：{', '.join(valid)}" if valid else "本对话还没有存储的数据。"
            raise ToolException(f"无法读取 {data_id}：{err}。{hint}") from None
        if offset >= size and size:
            raise ToolException(
                f"offset={offset} 超出范围：{data_id} 共 {size} 个字符，请使用 0 到 {size - 1}。"
            )
        end = offset + len(page)
        more = f"\n…（还有 {size - end} 个字符，下一页用 offset={end}）" if end < size else ""
        return f"{data_id} 第 {offset}–{end} 个字符（共 {size}）：\n{page}{more}"

    return [
        StructuredTool.from_function(fn, handle_tool_error=True, parse_docstring=False)
        for fn in (search_block, list_blocks, load)
    ]


def make_todo_tool(memory: BlockMemory, todos: Mapping[str, str]) -> BaseTool:
    """`search_todo` over the blocks of earlier sub-tasks: `todos` maps each todo id to its namespace.

    The only way a step reads another step's memory: by the earlier step's todo id (in its
    AgentExecResult's `context["todo_id"]`), within the same user's conversation.
    """

    def search_todo(todo_id: str, query: str) -> str:
        """Search the memory of an earlier step of this plan (its sub-task), by its todo id.

        `todo_id`: the earlier step's id (todo_…; listed below); `query`: keywords or a question.
        Returns at most 8 matching messages of that step, best first, with block ids and gists.
        """
        namespace = todos.get(todo_id)
        if namespace is None:
            valid = ", ".join(todos) or "（没有更早的步骤）"
            raise ToolException(f"未知的 todo_id {todo_id!r}；可用的 todo_id：{valid}")
        hits = memory.search(namespace, query, memory.settings.top_k, todo_id)
        if not hits:
            return f"步骤 {todo_id} 的记忆中没有与「{query}」相关的内容。"
        return "\n\n".join(f"[{h.block_id}] {h.metadata['core_semantic']}\n{h.text}" for h in hits)

    tool = StructuredTool.from_function(search_todo, handle_tool_error=True)
    tool.description += f" Earlier steps: {', '.join(todos)}."
    return tool
