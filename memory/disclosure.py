"""Progressive disclosure: the bounded window one model call sees.

Order: exactly one SystemMessage (the agent prompt, the user's long-term facts, then the block
metadata list when there are fewer than `block_list_limit` blocks, else a hint to call
`list_blocks` and the newest short-term summary lines), the latest complete block, the newest
loose messages (at most `loose_messages`), then the current input.

Two limits. When the window would pass `compress_at` (80 %) of the budget, its oldest messages
— the latest block's first, then the loose ones, never the newest unit or the current input —
are replaced, one unit at a time, by a one-line gist (`memory.metadata.core_semantic`, the
block's id beside it) listed in the system message, until the window is back under that line;
the messages stay searchable. A window still past the line shows the `list_blocks` hint instead
of the metadata list. Only when the window exceeds the budget itself do whole units go, oldest
first, then the other sub-tasks' lines, then the gists, and only then are the system prompt and
the current input cut. A tool call and its results form one unit, so they are never separated.

A window scoped to one sub-task (a plan step's `todo_id`, `BlockMemory.disclose(todo_id=…)`)
holds that sub-task's blocks and messages only; the namespace's other sub-tasks appear as one
line each (`elsewhere_lines`: id, block count, newest gist), reachable by id through
`search_block` / `list_blocks`.

A graph node discloses once and keeps only a `WindowRef` (ids, gists and counts) in the
checkpoint; the model-calling node turns it back into messages with `BlockMemory.window`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NotRequired

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from typing_extensions import TypedDict

from memory.metadata import core_semantic, data_ids
from memory.tokens import MESSAGE_OVERHEAD, count_messages_tokens, count_tokens, truncate
from memory.types import MemorySettings

__all__ = [
    "BLOCK_LIST_HEADER",
    "BLOCK_LIST_HINT",
    "ELSEWHERE_HEADER",
    "ELSEWHERE_TODOS",
    "GISTS_HEADER",
    "OUTLINE_HEADER",
    "Window",
    "WindowRef",
    "assemble_window",
    "elsewhere_lines",
    "units",
]

BLOCK_LIST_HEADER = "以下是本对话的历史记忆块（共 {n} 个）。需要细节时调用 search_block 检索，store:// 开头的数据用 load 分页读取："
BLOCK_LIST_HINT = (
    "本对话的历史已分为 {n} 个记忆块，未在此列出。需要更早的信息时，先调用 list_blocks 查看块列表，"
    "再用 search_block 检索；store:// 开头的大段数据用 load 分页读取。"
)
OUTLINE_HEADER = "更早对话的概要："
ELSEWHERE_HEADER = "本对话其他子任务（todo_id）的记忆不在此窗口中；需要时调用 search_block 或 list_blocks 并传入它的 todo_id："
ELSEWHERE_TODOS = 3  # other sub-tasks named in a scoped window, newest first
GISTS_HEADER = "以下较早的消息已压缩为摘要（原文可用 search_block 检索）："
_ROLE = {"human": "用户", "ai": "助手", "tool": "工具"}
_CUT_NOTE = "\n…（内容过长已截断）"


class WindowRef(TypedDict):
    """A disclosed window by reference: what graph state keeps instead of the messages.

    `message_ids` are the window's messages after the SystemMessage, in order (the current input
    last when there is one); `blocks` is how many blocks existed and `listed` whether their
    metadata was in the system message; `tokens` is the window's size when it was built.
    """

    namespace: str
    budget_tokens: int
    blocks: int
    listed: bool
    message_ids: list[str]
    current_id: str | None
    tokens: int
    gists: NotRequired[list[str]]


class Window(TypedDict):
    """What `assemble_window` built: the messages, whether the block list stayed, the gist lines."""

    messages: list[BaseMessage]
    listed: bool
    gists: list[str]


def units(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """Group messages into units: a tool call with all its results, or one plain message.

    SystemMessages and tool results whose call is not in `messages` are left out.
    """
    out: list[list[BaseMessage]] = []
    open_calls: dict[str, list[BaseMessage]] = {}
    for msg in messages:
        if isinstance(msg, SystemMessage):
            continue
        if isinstance(msg, ToolMessage):
            unit = open_calls.get(msg.tool_call_id)
            if unit is not None:
                unit.append(msg)
            continue
        unit = [msg]
        out.append(unit)
        if isinstance(msg, AIMessage):
            for call in msg.tool_calls:
                open_calls[call.get("id") or ""] = unit
    return [u for u in out if _complete(u)]


def _complete(unit: list[BaseMessage]) -> bool:
    head = unit[0]
    if not isinstance(head, AIMessage) or not head.tool_calls:
        return True
    answered = {m.tool_call_id for m in unit[1:] if isinstance(m, ToolMessage)}
    return all((c.get("id") or "") in answered for c in head.tool_calls)


def _system_text(
    prompt: str,
    blocks: list[dict[str, Any]],
    settings: MemorySettings,
    listed: bool,
    outline: Sequence[str],
    standing: Sequence[str] = (),
    gists: Sequence[str] = (),
    elsewhere: Sequence[str] = (),
) -> str:
    parts = [p for p in (prompt, "\n".join(standing), _memory_text(blocks, settings, listed, outline)) if p]
    if elsewhere:
        parts.append("\n".join([ELSEWHERE_HEADER, *elsewhere]))
    if gists:
        parts.append("\n".join([GISTS_HEADER, *gists]))
    return "\n\n".join(parts)


def _memory_text(
    blocks: list[dict[str, Any]], settings: MemorySettings, listed: bool, outline: Sequence[str]
) -> str:
    if not blocks:
        return ""
    if listed and len(blocks) < settings.block_list_limit:
        lines = [BLOCK_LIST_HEADER.format(n=len(blocks))]
        lines += [json.dumps(b, ensure_ascii=False) for b in blocks]
        extra = "\n".join(lines)
    else:
        extra = BLOCK_LIST_HINT.format(n=len(blocks))
        if listed and outline:
            extra = "\n".join([extra, OUTLINE_HEADER, *outline])
    return extra


def gist_line(unit: Sequence[BaseMessage], block_id: str | None, limit: int = 80) -> str:
    """One compressed unit in one line, with the id of the block holding it when known.

    A tool call keeps its name and arguments (what was asked) and its result's `store://` id; a
    message its role and first sentence (`memory.metadata.core_semantic`).
    """
    head, refs = unit[0], data_ids(unit)
    if isinstance(head, AIMessage) and head.tool_calls:
        calls = "；".join(
            f"{c['name']}({json.dumps(c['args'], ensure_ascii=False)})" for c in head.tool_calls
        )
        gist = f"调用 {calls}" + (f" → {refs[0]}" if refs else "")
    else:
        gist = f"{_ROLE.get(head.type, head.type)}：{core_semantic(unit, refs, limit)}"
    gist = " ".join(gist.split())
    gist = gist if len(gist) <= limit else gist[: limit - 1] + "…"
    return f"- {block_id}：{gist}" if block_id else f"- {gist}"


def elsewhere_lines(
    blocks: Sequence[dict[str, Any]], limit: int = ELSEWHERE_TODOS, chars: int = 30
) -> list[str]:
    """One line for each of the `limit` sub-tasks of `blocks` (oldest first) with the newest blocks.

    Each names the todo id, its number of blocks and the gist of its newest block.
    """
    by_todo: dict[str, list[dict[str, Any]]] = {}
    last: dict[str, int] = {}
    for position, block in enumerate(blocks):
        by_todo.setdefault(str(block["todo_id"]), []).append(block)
        last[str(block["todo_id"])] = position
    newest = sorted(by_todo, key=last.__getitem__)[-limit:]
    lines = []
    for todo in newest:
        own = by_todo[todo]
        gist = " ".join(str(own[-1].get("core_semantic") or "").split())
        gist = gist if len(gist) <= chars else gist[: chars - 1] + "…"
        lines.append(f"- {todo}（{len(own)} 块）：{gist}")
    return lines


def _newest(unit_list: list[list[BaseMessage]], max_messages: int) -> list[list[BaseMessage]]:
    kept: list[list[BaseMessage]] = []
    count = 0
    for unit in reversed(unit_list):
        if count + len(unit) > max_messages and kept:
            break
        kept.insert(0, unit)
        count += len(unit)
    return kept


def assemble_window(
    system_prompt: str,
    blocks: list[dict[str, Any]],
    latest: Sequence[BaseMessage],
    loose: Sequence[BaseMessage],
    current_input: BaseMessage | None,
    budget_tokens: int,
    settings: MemorySettings,
    allow_block_list: bool = True,
    outline: Sequence[str] = (),
    standing: Sequence[str] = (),
    latest_block: str | None = None,
    gists: Sequence[str] = (),
    elsewhere: Sequence[str] = (),
) -> Window:
    """The window (its `count_messages_tokens` never exceeds `budget_tokens`); see the module doc.

    `outline` holds short-term summary lines shown under the `list_blocks` hint when there are too
    many blocks to list; `standing` the user's long-term fact lines (already packed to their share
    of the budget); `latest_block` the id of the block `latest` belongs to; `gists` lines of units
    compressed earlier (when a window is rebuilt from its reference); `elsewhere` the lines naming
    the namespace's other sub-tasks (a window scoped to one todo).
    """
    current_id = current_input.id if current_input is not None else None
    skip = {current_id} if current_id else set()
    latest_units = units([m for m in latest if m.id not in skip])
    loose_units = _newest(units([m for m in loose if m.id not in skip]), settings.loose_messages)
    listed = allow_block_list
    gist_lines = list(gists)
    other = list(elsewhere)

    def system() -> str:
        return _system_text(system_prompt, blocks, settings, listed, outline, standing, gist_lines, other)

    def total() -> int:
        msgs = [m for u in latest_units + loose_units for m in u]
        msgs += [current_input] if current_input is not None else []
        return MESSAGE_OVERHEAD + count_tokens(system()) + count_messages_tokens(msgs)

    soft = int(budget_tokens * settings.compress_at)
    while total() > soft and len(latest_units) + len(loose_units) > 1:
        if latest_units:
            gist_lines.append(gist_line(latest_units.pop(0), latest_block))
        else:
            gist_lines.append(gist_line(loose_units.pop(0), None))
    if total() > soft:  # still past the line: the block list gives way to the list_blocks hint
        listed = False
    while total() > budget_tokens and (latest_units or loose_units):
        (latest_units if latest_units else loose_units).pop(0)
    while total() > budget_tokens and other:
        other.pop(0)
    while total() > budget_tokens and gist_lines:
        gist_lines.pop(0)
    text = system()
    if current_input is not None and total() > budget_tokens:
        room = (
            budget_tokens - MESSAGE_OVERHEAD - count_tokens(text) - MESSAGE_OVERHEAD - count_tokens(_CUT_NOTE)
        )
        content = (
            current_input.content
            if isinstance(current_input.content, str)
            else json.dumps(current_input.content, ensure_ascii=False)
        )
        current_input = current_input.model_copy(
            update={"content": truncate(content, max(room, 0)) + _CUT_NOTE}
        )
    window: list[BaseMessage] = [m for u in latest_units + loose_units for m in u]
    window += [current_input] if current_input is not None else []
    room = budget_tokens - MESSAGE_OVERHEAD - count_messages_tokens(window)
    if count_tokens(text) > room:
        text = truncate(text, max(room - count_tokens(_CUT_NOTE), 0)) + (_CUT_NOTE if room > 8 else "")
    result: list[BaseMessage] = [SystemMessage(content=text), *window]
    if count_messages_tokens(result) > budget_tokens:
        raise ValueError(
            f"budget_tokens={budget_tokens} cannot hold even a system message and the current input; "
            "raise the budget (the default is 2000)."
        )
    return Window(messages=result, listed=listed, gists=gist_lines)
