"""Agentic steps: a sub-agent whose model decides which tool to call, as a LangGraph subgraph.

`AGENT_LOOP` is one compiled subgraph shared by every agentic agent: a `model` node (one model
turn) and a `tools` node (runs that turn's tool calls), looping until the model answers in text,
asks the user, or reaches a bound. It is invoked inside the agent's step node, so it inherits the
run's checkpointer (each turn is a checkpoint under the step's namespace) and its stream writer;
what differs per step (model, tools, prompt head, bounds) is its runtime context, `LoopRun`.

Rules the loop keeps by hand (as `nodes.model_planner` does):

- every tool call of a model turn is answered by exactly one ToolMessage with its `tool_call_id`,
  before the next model turn: an unknown tool, arguments that are not JSON or fail the tool's
  schema, or a tool's own error come back as a ToolMessage with `status="error"` that says what is
  valid; only a bug in a tool raises;
- each tool call is streamed as a chunk of the step (`StreamChunk.index` = the step's seqNo);
- every model turn's prompt stays within `Context.token_budget`: the head is disclosed within
  part of it and earlier turns' tool results give way, oldest first (`nodes.kit.agentic_prompt`);
  a result longer than a preview is kept whole in the offload store (`store://` id, `load`);
- bounds: `Context.agent_max_turns` model turns and `Context.agent_step_tokens` tokens per step
  (prompt + reply, summed; the reply's usage when the endpoint reports it, else counted); a model
  that keeps calling tools stops at the bound with `stop="exhausted"` and the agent answers on its
  offline path;
- asking the user: the model calls `ask_user`; the loop stops with `stop="asking"`, the agent
  returns an interrupted result whose context carries the transcript (`store://` id), the graph's
  ask_user node interrupts, and when the step runs again `resume_messages` appends the answer as
  the ToolMessage of that very call: the loop goes on where it stopped, no tool or turn repeated.
  The same question twice gets the earlier answer back as an error instead of a second interrupt.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from pydantic import ValidationError
from typing_extensions import TypedDict

from memory.tokens import count_message_tokens, count_messages_tokens, count_tokens
from nodes.kit.agentic_prompt import PREVIEW_TOKENS, REF_KEY, fit_turn
from nodes.model_planner import PlanningFailedError, stream_model
from tools.faults import model_errors, transient_errors
from tools.lang import pick

__all__ = [
    "AGENT_LOOP",
    "ASK_USER",
    "closures",
    "final_text",
    "LoopRun",
    "LoopState",
    "ask_user_tool",
    "resume_messages",
    "run_loop",
    "saved_loop",
]

log = logging.getLogger("plangraph.agentic")

ASK_USER = "ask_user"
TOOL_OUTPUT_CHARS = 3000  # longest tool result a model turn sees (the rest: `load` by id, or narrow it)
MAX_ASKS = 2  # questions one step may put to the user
MAX_CALLS_PER_TURN = 8  # tool calls run per model turn; the rest are answered with an error
_ARGS_SHOWN = 160


def ask_user_tool() -> BaseTool:
    """The `ask_user` tool (never run as a function: the loop stops and the graph asks the user)."""

    def ask_user(question: str) -> str:
        """Ask the user for information only they can give (e.g. the project's location or capacity).

        `question`: one short question in the user's language. The step pauses until the user
        answers; the answer comes back as this tool's result. Do not ask what the tools can find.
        """
        raise NotImplementedError("ask_user is handled by the agent loop")

    return StructuredTool.from_function(ask_user)


@dataclass
class LoopRun:
    """What one step's loop works with: the runtime context of `AGENT_LOOP` (never checkpointed).

    `head` is the prompt before the loop's own messages (the agent's single system message, its
    disclosed memory window and the request); `emit` streams a chunk of the step. `budget` bounds
    each turn's prompt (0: unbounded); `offload(text)` stores a long tool result whole and returns
    its `store://` id (None: results are only cut).
    """

    model: BaseChatModel
    tools: Sequence[BaseTool]
    head: list[BaseMessage]
    max_turns: int = 6
    max_tokens: int = 24000
    emit: Callable[[str], None] = field(default=lambda text: None)
    language: str = "zh"  # of the notices it streams (the request's language)
    budget: int = 0
    offload: Callable[[str], str] | None = None

    def tool(self, name: str) -> BaseTool | None:
        """The bound tool called `name` (ask_user included), or None."""
        return next((t for t in self.all_tools() if t.name == name), None)

    def all_tools(self) -> list[BaseTool]:
        """The tools the model sees: the agent's plus `ask_user`."""
        return [*self.tools, ask_user_tool()]


class LoopState(TypedDict):
    """The loop's checkpointed state: its own messages (after the head) and its counters.

    `stop` is "" while running, then "answered" (the last AIMessage is the answer), "asking"
    (`question`, `pending` = the ask_user call id) or "exhausted" (`reason` says which bound).
    """

    messages: Annotated[list[AnyMessage], add_messages]
    turns: int
    tokens: int
    asked: list[str]
    stop: str
    reason: str
    question: str
    pending: str


def _model(state: LoopState, runtime: Runtime[LoopRun]) -> dict[str, Any]:
    """One model turn (or the stop, when a bound is reached)."""
    run = runtime.context
    if state["turns"] >= run.max_turns:
        return {"stop": "exhausted", "reason": f"model turns reached the limit of {run.max_turns}"}
    prompt = fit_turn(run.head, state["messages"], run.budget)
    estimate = count_messages_tokens(prompt)
    if state["tokens"] + estimate > run.max_tokens:
        return {
            "stop": "exhausted",
            "reason": f"the step's token budget of {run.max_tokens} would be passed "
            f"({state['tokens']} spent, next prompt ≈ {estimate})",
        }
    try:
        bound = run.model.bind_tools(run.all_tools(), tool_choice="auto")  # servers drop tools without it
    except NotImplementedError:
        return {"stop": "exhausted", "reason": f"the chat model {type(run.model).__name__} cannot call tools"}
    stopping: tuple[type[Exception], ...] = (*model_errors(), PlanningFailedError)
    try:
        reply = stream_model(bound, prompt, lambda text: None)
    except transient_errors():
        raise  # the step node's RetryPolicy retries it
    except stopping as error:
        return {"stop": "exhausted", "reason": f"the model call failed: {type(error).__name__}: {error}"}
    reported = reply.usage_metadata["total_tokens"] if reply.usage_metadata else 0
    spent = reported or estimate + count_message_tokens(reply)
    update: dict[str, Any] = {
        "messages": [reply],
        "turns": state["turns"] + 1,
        "tokens": state["tokens"] + spent,
    }
    if not reply.tool_calls and not reply.invalid_tool_calls:
        update["stop"] = "answered"
    return update


def _tools(state: LoopState, runtime: Runtime[LoopRun]) -> dict[str, Any]:
    """Answer every tool call of the last model turn; stop when the model asks the user."""
    run = runtime.context
    reply = state["messages"][-1]
    assert isinstance(reply, AIMessage), "the tools node follows a model turn"
    names = [t.name for t in run.all_tools()]
    out: list[ToolMessage] = []
    asking: tuple[str, str] | None = None
    asked = list(state["asked"])
    for bad in reply.invalid_tool_calls:
        run.emit(
            pick(
                run.language,
                f"工具调用 {bad.get('name')} 的参数不是合法 JSON，已请模型重发",
                f"The arguments of the tool call {bad.get('name')} are not valid JSON; the model was asked to resend it",
            )
        )
        out.append(
            _error(
                bad.get("id") or "",
                f"the arguments of {bad.get('name')!r} are not valid JSON; resend the call with a JSON object",
            )
        )
    for number, call in enumerate(reply.tool_calls):
        call_id = call["id"] or ""
        name = call["name"]
        run.emit(pick(run.language, "调用工具", "Calling tool") + f" {name}({_shown(call['args'])})")
        tool = run.tool(name)
        if number >= MAX_CALLS_PER_TURN:
            out.append(
                _error(call_id, f"at most {MAX_CALLS_PER_TURN} tool calls per turn; not run, call it again")
            )
        elif tool is None:
            out.append(_error(call_id, f"unknown tool {name!r}; available: {', '.join(names)}"))
        elif name == ASK_USER:
            question = str(call["args"].get("question") or "").strip()
            earlier = next((a for a in asked if _same(a, question)), None)
            if not question:
                out.append(_error(call_id, "ask_user needs a non-empty 'question'"))
            elif earlier is not None:
                out.append(_error(call_id, _answered(earlier, state["messages"])))
            elif len(asked) >= MAX_ASKS or asking is not None:
                out.append(
                    _error(
                        call_id,
                        f"you may ask the user at most {MAX_ASKS} questions in this step, one at a time; answer with what you have",
                    )
                )
            else:
                asking = (call_id, question)
        else:
            out.append(_invoke(tool, call, run.offload))
    update: dict[str, Any] = {"messages": out}
    if asking is not None:
        update.update(stop="asking", question=asking[1], pending=asking[0], asked=[*asked, asking[1]])
    return update


def _invoke(tool: BaseTool, call: Any, offload: Callable[[str], str] | None = None) -> ToolMessage:
    """Run one tool call; a schema mismatch becomes an error ToolMessage showing the schema.

    A result longer than a preview is offloaded whole (its id in `additional_kwargs["ref"]`), so
    the cut that a later turn's prompt makes (`fit_turn`) names where it is.
    """
    try:
        result = tool.invoke({**call, "type": "tool_call"})
    except ValidationError as error:
        schema = json.dumps(tool.get_input_jsonschema().get("properties", {}), ensure_ascii=False)
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        return _error(
            call["id"] or "", f"invalid arguments for {tool.name!r} ({problems}); its arguments: {schema}"
        )
    message = (
        result if isinstance(result, ToolMessage) else ToolMessage(str(result), tool_call_id=call["id"] or "")
    )
    text: str = message.text
    if message.status == "error" and not text.startswith("Error:"):
        message.content = text = f"Error: {text}"
    long = offload is not None and message.status != "error" and count_tokens(text) > PREVIEW_TOKENS
    ref = offload(text) if long and offload is not None else None
    if ref is not None:
        message.additional_kwargs[REF_KEY] = ref
    if len(text) > TOOL_OUTPUT_CHARS:
        where = f"全文存于 {ref}，用 load 分页读取" if ref else "可缩小查询范围再调用"
        message.content = f"{text[:TOOL_OUTPUT_CHARS]}\n…（结果过长，已截断 {len(text) - TOOL_OUTPUT_CHARS} 个字符；{where}）"
    message.name = tool.name
    return message


def _error(call_id: str, text: str) -> ToolMessage:
    return ToolMessage(content=f"Error: {text}", tool_call_id=call_id, status="error")


def _shown(args: Any) -> str:
    text = json.dumps(args, ensure_ascii=False, default=str)
    return text if len(text) <= _ARGS_SHOWN else text[:_ARGS_SHOWN] + "…"


def _same(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        return re.sub(r"[\W_]+", "", text.lower())

    return norm(a) == norm(b)


def _answered(question: str, messages: Sequence[BaseMessage]) -> str:
    """The error for a repeated question: the user's earlier answer to it."""
    ids = {
        c["id"]
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if c["name"] == ASK_USER and _same(str(c["args"].get("question", "")), question)
    }
    answer = next((m.text for m in messages if isinstance(m, ToolMessage) and m.tool_call_id in ids), "")
    return f"you already asked the user {question!r} and they answered: {answer!r}; use that answer, do not ask again"


def _after_model(state: LoopState) -> Literal["tools", "__end__"]:
    return "__end__" if state["stop"] else "tools"


def _after_tools(state: LoopState) -> Literal["model", "__end__"]:
    return "__end__" if state["stop"] else "model"


_builder = StateGraph(LoopState, context_schema=LoopRun)
_builder.add_node("model", _model)
_builder.add_node("tools", _tools)
_builder.add_edge(START, "model")
_builder.add_conditional_edges("model", _after_model)
_builder.add_conditional_edges("tools", _after_tools)
AGENT_LOOP = _builder.compile(name="agent_loop")


def run_loop(run: LoopRun, start: LoopState | None = None) -> LoopState:
    """Run the loop to its stop: from the beginning, or from a saved state (after an answer)."""
    state = start or LoopState(
        messages=[], turns=0, tokens=0, asked=[], stop="", reason="", question="", pending=""
    )
    state = {**state, "stop": "", "reason": "", "question": "", "pending": ""}
    limit = 2 * run.max_turns + 4  # two supersteps per turn, plus the closing model node
    final: dict[str, Any] = AGENT_LOOP.invoke(state, config={"recursion_limit": limit}, context=run)
    return LoopState(**final)  # type: ignore[typeddict-item]


def saved_loop(state: LoopState) -> dict[str, Any]:
    """A stopped loop as JSON (what the interrupted step stores, to resume from)."""
    return {**state, "messages": messages_to_dict(state["messages"])}


def resume_messages(saved: dict[str, Any], answer: str) -> LoopState:
    """The saved loop with the user's `answer` as the result of its pending `ask_user` call."""
    messages: list[AnyMessage] = messages_from_dict(saved["messages"])  # type: ignore[assignment]
    messages.append(ToolMessage(content=answer, tool_call_id=saved["pending"], name=ASK_USER))
    return LoopState(**{**saved, "messages": messages})  # type: ignore[typeddict-item]


def final_text(state: LoopState) -> str:
    """The model's answer: the text of the last AIMessage (when the loop stopped "answered")."""
    last = state["messages"][-1] if state["messages"] else None
    return last.text.strip() if isinstance(last, AIMessage) else ""


def closures(state: LoopState) -> list[BaseMessage]:
    """The loop's complete tool-call closures (an AIMessage with calls + all its ToolMessages), for memory.

    A turn whose calls are not all answered (the pending `ask_user`) is left out whole.
    """
    answered = {m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)}
    complete = {
        c["id"]
        for m in state["messages"]
        if isinstance(m, AIMessage) and m.tool_calls and all(c["id"] in answered for c in m.tool_calls)
        for c in m.tool_calls
    }
    return [
        m
        for m in state["messages"]
        if (isinstance(m, AIMessage) and m.tool_calls and all(c["id"] in complete for c in m.tool_calls))
        or (isinstance(m, ToolMessage) and m.tool_call_id in complete)
    ]
