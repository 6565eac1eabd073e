"""Fit a chat request into the model's context window before it is sent.

A request is the messages, the tool schemas and the output bound (`max_tokens`); all three
must fit the window. Tokens are estimated with the memory package's counter (the packaged
MiniLM tokenizer; tiktoken cannot load its encodings offline) times the endpoint's `TokenGauge`
ratio: before the server has reported any `usage.prompt_tokens` the gauge assumes the byte-level
worst case for CJK text (3 tokens per character, e.g. SmolLM2's English BPE), afterwards the
largest ratio seen between the server's count and the estimate, plus 10%.

When a request is too big, `fit_request` takes away, in this order: earlier rounds of the same
loop (an assistant turn and its tool results, oldest first; the newest round and the newest user
message stay), older user messages, then it shortens the longest remaining message, then lowers
the output bound down to `MIN_OUTPUT`. If even that does not fit, `ModelRejectedError` (kind
"overflow") says so before anything is sent.

What is taken away is summarised, not forgotten: a short deterministic digest (`digest`) — each
dropped round's tool names and arguments with the first line of each result, a dropped reply's
or user message's first line; the newest `DIGEST_ROUNDS` of them, older ones only counted — is
added to the end of the system prompt (one system message stays one), and counted like the rest.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory.tokens import count_messages_tokens, count_tokens
from tools.faults import ModelRejectedError

__all__ = [
    "DIGEST_ROUNDS",
    "MIN_OUTPUT",
    "SAFE_CONTEXT",
    "TokenGauge",
    "digest",
    "fit_request",
    "window_from_models",
]

SAFE_CONTEXT = 4096  # llama.cpp's and most local servers' default window; used when nothing says more
MIN_OUTPUT = 64
MARGIN = 32  # chat-template framing the per-message overhead does not cover
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_CUT_NOTE = "…（已截断）"
DIGEST_ROUNDS = 6  # dropped rounds the digest lists (the newest); older ones are only counted
_DIGEST_PART = 60  # characters of a call's arguments, or of a result's first line, in the digest


class TokenGauge:
    """How many of the endpoint's tokens one estimated token is, learned from `usage.prompt_tokens`."""

    def __init__(self) -> None:
        self._ratio: float | None = None
        self._lock = threading.Lock()

    def estimate(self, messages: Sequence[BaseMessage], tools: Sequence[Any] = ()) -> int:
        """Prompt tokens of `messages` plus `tools` (their JSON schemas) as this endpoint counts them."""
        base = _base(messages, tools)
        with self._lock:
            ratio = self._ratio
        if ratio is None:  # nothing measured yet: CJK at the byte-level worst case
            return base + 2 * _cjk(messages, tools) + MARGIN
        return int(base * ratio * 1.1) + MARGIN

    def observe(self, messages: Sequence[BaseMessage], tools: Sequence[Any], prompt_tokens: int) -> None:
        """Learn from the server's count of a request's prompt tokens (keeps the largest ratio)."""
        base = _base(messages, tools)
        if base <= 0 or prompt_tokens <= 0:
            return
        with self._lock:
            self._ratio = max(self._ratio or 0.0, prompt_tokens / base)

    @property
    def ratio(self) -> float | None:
        """The learned ratio (None before the first observation)."""
        return self._ratio


def _tools_text(tools: Sequence[Any]) -> str:
    return json.dumps(list(tools), ensure_ascii=False, default=str) if tools else ""


def _base(messages: Sequence[BaseMessage], tools: Sequence[Any]) -> int:
    return count_messages_tokens(messages) + count_tokens(_tools_text(tools))


def _cjk(messages: Sequence[BaseMessage], tools: Sequence[Any]) -> int:
    text = "".join(m.content if isinstance(m.content, str) else json.dumps(m.content) for m in messages)
    return len(_CJK.findall(text + _tools_text(tools)))


def _length(message: BaseMessage) -> int:
    text = len(message.content) if isinstance(message.content, str) else 0
    if isinstance(message, AIMessage) and message.tool_calls:
        text += len(json.dumps([c["args"] for c in message.tool_calls], ensure_ascii=False))
    return text


def _shortened(message: BaseMessage, keep: int) -> BaseMessage:
    """`message` cut to about `keep` characters; a tool call's arguments become a short note."""
    text = message.content if isinstance(message.content, str) else ""
    update: dict[str, Any] = {"content": text[:keep] + _CUT_NOTE if len(text) > keep else text}
    if isinstance(message, AIMessage) and message.tool_calls:
        update["tool_calls"] = [
            {**c, "args": {"note": _CUT_NOTE + json.dumps(c["args"], ensure_ascii=False)[:100]}}
            for c in message.tool_calls
        ]
    return message.model_copy(update=update)


def _units(messages: list[BaseMessage]) -> list[list[BaseMessage]]:
    """Messages grouped so that an assistant turn with tool calls stays with its tool results."""
    units: list[list[BaseMessage]] = []
    for message in messages:
        if isinstance(message, ToolMessage) and units and isinstance(units[-1][0], AIMessage):
            units[-1].append(message)
        else:
            units.append([message])
    return units


def _first_line(content: Any) -> str:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:_DIGEST_PART] + ("…" if len(line) > _DIGEST_PART else "")


def _digest_line(unit: list[BaseMessage]) -> str:
    first = unit[0]
    if isinstance(first, AIMessage) and first.tool_calls:
        results = {m.tool_call_id: m.content for m in unit[1:] if isinstance(m, ToolMessage)}
        calls = []
        for call in first.tool_calls:
            args = json.dumps(call["args"], ensure_ascii=False)
            args = args[:_DIGEST_PART] + ("…" if len(args) > _DIGEST_PART else "")
            calls.append(
                f"{call['name']}({args}) → {_first_line(results.get(call.get('id') or '', '（无结果）'))}"
            )
        return "；".join(calls)
    who = "用户" if isinstance(first, HumanMessage) else "助手" if isinstance(first, AIMessage) else "工具"
    return f"{who}：{_first_line(first.content)}"


def digest(dropped: Sequence[list[BaseMessage]]) -> str:
    """A short, deterministic digest of rounds left out of a request, oldest first (see the module docstring)."""
    if not dropped:
        return ""
    shown = list(dropped)[-DIGEST_ROUNDS:]
    lines = [f"（为放进上下文窗口，本次对话较早的 {len(dropped)} 轮已省略原文，摘要如下）"]
    if len(dropped) > len(shown):
        lines.append(f"- 更早的 {len(dropped) - len(shown)} 轮：从略")
    lines += [f"- {_digest_line(unit)}" for unit in shown]
    return "\n".join(lines)


def _with_digest(head: list[BaseMessage], dropped: list[list[BaseMessage]]) -> list[BaseMessage]:
    """`head` (the system prompt, or nothing) with the digest of `dropped` appended."""
    note = digest(dropped)
    if not note:
        return head
    if head:
        system = head[0]
        text = system.content if isinstance(system.content, str) else json.dumps(system.content)
        return [system.model_copy(update={"content": f"{text}\n\n{note}"}), *head[1:]]
    return [SystemMessage(note)]


def _position(messages: Sequence[BaseMessage], unit: list[BaseMessage]) -> int:
    return next(i for i, m in enumerate(messages) if m is unit[0])


def fit_request(
    messages: Sequence[BaseMessage],
    tools: Sequence[Any],
    max_output: int,
    window: int,
    gauge: TokenGauge,
) -> tuple[list[BaseMessage], int]:
    """`messages` and an output bound that fit `window` (see the module docstring), or ModelRejectedError."""
    units = _units(list(messages))
    head = units.pop(0) if units and isinstance(units[0][0], SystemMessage) else []

    def size(parts: list[list[BaseMessage]]) -> int:
        return gauge.estimate([m for unit in [head, *parts] for m in unit], tools)

    def fits(parts: list[list[BaseMessage]], output: int) -> bool:
        return size(parts) + output <= window

    if fits(units, max_output):
        return list(messages), max_output
    # 1. earlier rounds (non-user units), oldest first; 2. older user messages. The last unit stays.
    # What is dropped is summarised at the end of the system prompt, counted as it grows.
    system, dropped = head, []
    for droppable in (lambda u: not isinstance(u[0], HumanMessage), lambda u: True):
        index = 0
        while not fits(units, max_output) and index < len(units) - 1:
            last_human = max((i for i, u in enumerate(units) if isinstance(u[0], HumanMessage)), default=-1)
            if droppable(units[index]) and index != last_human:
                dropped.append(units.pop(index))
                head = _with_digest(system, sorted(dropped, key=lambda u: _position(messages, u)))
            else:
                index += 1
    # 3. shorten the longest message (system prompt and memory included) while it helps
    groups = [head, *units]
    while not fits(groups[1:], max_output):
        where = [(g, i) for g, unit in enumerate(groups) for i in range(len(unit))]
        g, i = max(where, key=lambda gi: _length(groups[gi[0]][gi[1]]))
        length = _length(groups[g][i])
        if length < 200:
            break
        over = size(groups[1:]) + max_output - window
        keep = max(100, length - max(over * 2, length // 4))
        groups[g] = [*groups[g][:i], _shortened(groups[g][i], keep), *groups[g][i + 1 :]]
        head, units = groups[0], groups[1:]
    # 4. a smaller output bound
    room = window - size(units)
    if room < max_output:
        max_output = room
    if max_output < MIN_OUTPUT:
        raise ModelRejectedError(
            f"请求放不进模型的上下文窗口：删减后仍需约 {size(units)} 个 token，窗口只有 {window} 个"
            f"（还要留 {MIN_OUTPUT} 个给回答）。请调大 PLANGRAPH_MODEL_CONTEXT（须与模型服务的实际窗口一致），"
            "或调小 PLANGRAPH_TOKEN_BUDGET。",
            kind="overflow",
        )
    return [m for unit in [head, *units] for m in unit], max_output


# Where OpenAI-compatible servers put a model's context length in /v1/models.
_WINDOW_KEYS = ("context_length", "max_model_len", "context_window", "max_context_length", "n_ctx")


def window_from_models(listing: Any, model: str) -> int | None:
    """The context length `/v1/models` reports for `model` (vLLM, llama.cpp, LM Studio, OpenRouter keys)."""
    cards = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(cards, list):
        return None
    chosen = [c for c in cards if isinstance(c, dict) and c.get("id") == model] or [
        c for c in cards if isinstance(c, dict)
    ][:1]
    for card in chosen:
        for where in (card, card.get("meta") or {}):
            if not isinstance(where, dict):
                continue
            for key in _WINDOW_KEYS:
                value = where.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None
