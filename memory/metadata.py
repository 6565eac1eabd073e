"""Block text and DESIGN.md metadata: block_type, keywords, core_semantic, data_ids, create_time."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory.text import tokenize

__all__ = [
    "STORE_REF",
    "block_text",
    "search_text",
    "block_type",
    "core_semantic",
    "create_time",
    "data_ids",
    "keywords",
]

STORE_REF = re.compile(r"store://[0-9a-f]{8,64}")
_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s")


def _text(message: BaseMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _role(message: BaseMessage) -> str:
    if isinstance(message, HumanMessage):
        return message.name or "user"
    if isinstance(message, ToolMessage):
        return f"tool {message.name}" if message.name else "tool"
    if isinstance(message, SystemMessage):
        return "system"
    return message.name or "assistant"


def message_line(message: BaseMessage) -> str:
    """One line per message: `role: content`, tool calls rendered as `→ name(args)`."""
    parts = [_text(message).strip()]
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            parts.append(f"→ {call['name']}({json.dumps(call['args'], ensure_ascii=False)})")
    return f"{_role(message)}: {' '.join(p for p in parts if p)}"


def search_text(messages: Sequence[BaseMessage]) -> str:
    """What BM25 and keywords see: contents and tool calls, without role labels."""
    parts: list[str] = []
    for m in messages:
        parts.append(_text(m))
        if isinstance(m, AIMessage):
            parts += [f"{c['name']} {json.dumps(c['args'], ensure_ascii=False)}" for c in m.tool_calls]
    return "\n".join(p for p in parts if p)


def block_text(messages: Sequence[BaseMessage]) -> str:
    """The searchable, quotable text of a block."""
    return "\n".join(message_line(m) for m in messages)


def block_type(messages: Sequence[BaseMessage]) -> str:
    """`tool_call` when a tool ran, `qa` when a user was answered, else `chat`."""
    if any(isinstance(m, AIMessage) and m.tool_calls for m in messages):
        return "tool_call"
    asked = any(isinstance(m, HumanMessage) for m in messages)
    answered = any(isinstance(m, AIMessage) for m in messages)
    return "qa" if asked and answered else "chat"


def data_ids(messages: Sequence[BaseMessage]) -> list[str]:
    """Every `store://` reference in the block, in order of appearance."""
    found: list[str] = []
    for m in messages:
        for ref in STORE_REF.findall(_text(m) + " " + json.dumps(m.additional_kwargs, default=str)):
            if ref not in found:
                found.append(ref)
    return found


def keywords(text: str, idf: Callable[[str], float], refs: Sequence[str], limit: int = 6) -> list[str]:
    """Up to `limit` terms ranked by tf·(1+idf), then the block's `store://` ids."""
    counts = Counter(t for t in tokenize(STORE_REF.sub(" ", text)) if len(t) > 1)
    ranked = sorted(counts, key=lambda t: (-counts[t] * (1.0 + idf(t)), t))
    return ranked[:limit] + [r for r in refs if r not in ranked][:3]


def _clip(text: str, limit: int) -> str:
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_sentence(text: str) -> str:
    text = _SPACES.sub(" ", text).strip()
    return _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""


def core_semantic(messages: Sequence[BaseMessage], refs: Sequence[str], limit: int = 50) -> str:
    """An extractive one-line gist of at most `limit` characters."""
    calls = [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    asked = next((_text(m) for m in messages if isinstance(m, HumanMessage) and _text(m).strip()), "")
    answer = next((_text(m) for m in reversed(messages) if isinstance(m, AIMessage) and _text(m).strip()), "")
    if calls:
        names = "、".join(dict.fromkeys(calls))
        tail = f"，结果存储至{refs[0]}" if refs else (f"：{_first_sentence(asked)}" if asked else "")
        return _clip(f"调用{names}工具{tail}", limit)
    if asked and answer:
        return _clip(f"{_first_sentence(asked)} → {_first_sentence(answer)}", limit)
    first = next((_text(m) for m in messages if _text(m).strip()), "")
    return _clip(_first_sentence(first), limit)


def create_time(timestamp: float) -> str:
    """`YYYY-MM-DD HH:MM:SS` (UTC) as in DESIGN.md."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S")
