"""The prompt of one agent-loop turn, fitted to the token budget however many turns came before.

A turn's prompt is the step's head (its disclosed window, at most `HEAD_SHARE` of the budget)
plus the loop's own messages: every earlier model turn and its tool results. Those grow with each
turn, so when they would pass the budget `fit_turn` makes room, oldest first, in this order:

1. older turns' tool results shrink to a preview naming their `store://` id (`load` reads the
   whole text; results the loop did not store say to call the tool again), their text to a gist;
2. older turns go whole (the call and its results together, so tool-call ids stay paired) and
   are named in one line each in the system message (tool, arguments, `store://` id);
3. the newest turn's own long arguments are cut to their opening (the model wrote them; the
   results are the evidence it needs), then its results are cut to share what is left, each
   keeping its id.

Nothing here changes the loop's checkpointed messages: the whole results stay in the loop state
and in the offload store, and the step's closures reach block memory as they were.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from memory.tokens import count_messages_tokens, count_tokens, truncate

__all__ = ["EARLIER_HEADER", "HEAD_SHARE", "PREVIEW_TOKENS", "REF_KEY", "fit_turn", "preview"]

HEAD_SHARE = 0.6  # of the budget for the head (window + request); the rest is the loop's own room
PREVIEW_TOKENS = 60  # of an older turn's tool result kept in the prompt
REF_KEY = "ref"  # additional_kwargs key of a tool result's `store://` id
EARLIER_HEADER = "本步骤更早的工具调用（结果已移出上下文，需要时用 load 读取 store:// 全文，或重新调用）："
_EARLIER_LINES = 6
_ARGS_CHARS = 80
_NOTE_TOKENS = 40  # what `preview` adds after the cut text (where the whole result is)
_ARG_KEEP = 200  # characters of a long argument of the newest model turn kept when it does not fit


def preview(text: str, ref: str | None, tokens: int) -> str:
    """The first `tokens` of a tool result and where the rest is (its id, or: call the tool again)."""
    if count_tokens(text) <= tokens:
        return text
    where = f"全文 {len(text)} 字符存于 {ref}，用 load 分页读取" if ref else "需要全文时重新调用该工具"
    return f"{truncate(text, tokens).rstrip()}…（{where}）"


def _turns(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """The loop's messages as turns: a model message with the tool results that answer it."""
    turns: list[list[BaseMessage]] = []
    for message in messages:
        if isinstance(message, ToolMessage) and turns:
            turns[-1].append(message)
        else:
            turns.append([message])
    return turns


def _shrunk(turn: list[BaseMessage], tokens: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for message in turn:
        text = message.text
        if isinstance(message, ToolMessage):
            cut = preview(text, message.additional_kwargs.get(REF_KEY), tokens)
        else:
            cut = truncate(text, tokens) + ("…" if count_tokens(text) > tokens else "")
        out.append(message if cut == text else message.model_copy(update={"content": cut}))
    return out


def _line(turn: list[BaseMessage]) -> str:
    head = turn[0]
    refs = {m.tool_call_id: m.additional_kwargs.get(REF_KEY) for m in turn if isinstance(m, ToolMessage)}
    calls = head.tool_calls if isinstance(head, AIMessage) else []
    parts = []
    for call in calls:
        args = json.dumps(call["args"], ensure_ascii=False, default=str)
        args = args if len(args) <= _ARGS_CHARS else args[: _ARGS_CHARS - 1] + "…"
        ref = refs.get(call["id"] or "")
        parts.append(f"{call['name']}({args})" + (f" → {ref}" if ref else ""))
    return "- " + ("；".join(parts) or " ".join(head.text.split())[:_ARGS_CHARS])


def _short(value: object) -> object:
    if isinstance(value, str) and len(value) > _ARG_KEEP:
        return f"{value[:_ARG_KEEP]}…（共 {len(value)} 字符，提示中只显示开头）"
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def _short_call(message: BaseMessage) -> BaseMessage:
    """The model's own message with its long arguments and text cut to their opening."""
    if not isinstance(message, AIMessage):
        return message
    calls = [{**call, "args": _short(call["args"])} for call in message.tool_calls]
    text = message.content if not isinstance(message.content, str) else _short(message.content)
    if calls == message.tool_calls and text == message.content:
        return message
    return message.model_copy(update={"tool_calls": calls, "content": text})


def fit_turn(head: Sequence[BaseMessage], messages: Sequence[BaseMessage], budget: int) -> list[BaseMessage]:
    """`head` + `messages` within `budget` tokens (`memory.tokens` count); see the module doc.

    `budget` <= 0 leaves the prompt as it is. The head is never cut here (it was disclosed within
    its share); the newest turn is kept, cut to fit, whatever it costs.
    """
    prompt = [*head, *messages]
    if budget <= 0 or count_messages_tokens(prompt) <= budget:
        return prompt
    system, rest = head[0], list(head[1:])
    assert isinstance(system, SystemMessage), "the head starts with the step's system message"
    turns = _turns(messages)
    earlier: list[str] = []

    def build() -> list[BaseMessage]:
        lines = earlier[-_EARLIER_LINES:]
        text = f"{system.text}\n\n" + "\n".join([EARLIER_HEADER, *lines]) if lines else system.text
        return [SystemMessage(content=text), *rest, *(m for t in turns for m in t)]

    for i in range(len(turns) - 1):  # 1. older results shrink to a preview, oldest first
        turns[i] = _shrunk(turns[i], PREVIEW_TOKENS)
        if count_messages_tokens(build()) <= budget:
            return build()
    while len(turns) > 1 and count_messages_tokens(build()) > budget:  # 2. older turns go whole
        earlier.append(_line(turns.pop(0)))
    over = count_messages_tokens(build()) - budget
    if over <= 0:
        return build()
    turns[-1] = [_short_call(turns[-1][0]), *turns[-1][1:]]  # 3. its long arguments to an opening,
    over = count_messages_tokens(build()) - budget
    if over <= 0:
        return build()
    newest = turns[-1]  # then its results share what is left
    results = [m for m in newest if isinstance(m, ToolMessage)]
    if results:
        spent = sum(count_tokens(m.text) for m in results)
        share = max((spent - over) // len(results) - _NOTE_TOKENS, 0)
        turns[-1] = [_shrunk([m], share)[0] if isinstance(m, ToolMessage) else m for m in newest]
    while earlier and count_messages_tokens(build()) > budget:
        earlier.pop(0)
    return build()
