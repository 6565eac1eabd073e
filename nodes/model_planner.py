"""Model-mode planning: the model calls `list_agents` and `create_plan` until the plan validates.

The prompt is the window the `disclose` node chose (nodes/disclose.py), rebuilt from memory; the
model may also call `search_block`, `list_blocks` and `load` on the planner's own memory
namespace. Their results live only in this call's message list: nothing is written back.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.messages.tool import invalid_tool_call

from memory import WindowRef
from nodes.kit.registry import AgentSpec
from nodes.kit.services import RunServices
from tools.faults import ModelFaultError, ModelRejectedError
from tools.model.calls import text_tool_calls
from tools.planning import make_planning_tools

__all__ = ["MAX_PLAN_ROUNDS", "PLANNER_PROMPT", "PlanningFailedError", "plan_with_model", "stream_model"]

log = logging.getLogger("plangraph.planner")

MAX_PLAN_ROUNDS = 4
PLAN_TIMEOUTS = 2  # model planning (every round together) ends within 2 × PLANGRAPH_MODEL_TIMEOUT
PLANNER_PROMPT = """你是多智能体系统的规划器。把用户的需求拆成由已注册智能体执行的步骤。
先调用 list_agents 查看可用的智能体及其所需输入，再调用 create_plan 提交计划：
每个步骤写明 seqNo（从 0 开始）、agentName、requirement（该步骤要完成什么，用用户的语言）、dependsOn。
没有依赖的步骤可以并行。用户已经有的结果（例如“我已经有测算方案了”）不要再安排步骤。
需要更早的对话内容（例如用户之前给过的参数）时，先调用 search_block 检索，store:// 数据用 load 读取。
不要直接回答用户的问题，只通过 create_plan 提交计划。"""
NUDGE = "请调用 create_plan 提交计划（只能使用 list_agents 返回的智能体名称）。"


class PlanningFailedError(RuntimeError):
    """The model did not produce a valid plan within MAX_PLAN_ROUNDS."""


def stream_model(
    model: Any, messages: list[BaseMessage], emit: Callable[[str], None] | None = None
) -> AIMessage:
    """Stream one model reply (emitting text tokens as they arrive when `emit` is given); the whole message.

    The planner and the finalizer pass no `emit`: their raw model text is not user-facing progress.
    A call with tools is not streamed (`disable_streaming="tool_calling"`, graphs/services.py): the
    model then yields the whole reply at once, which is returned as it is.
    """
    full: AIMessageChunk | None = None
    for chunk in model.stream(messages):
        if not isinstance(chunk, AIMessageChunk):  # not streamed: the whole reply, arguments parsed strictly
            if emit is not None and chunk.text:
                emit(chunk.text)
            return chunk  # type: ignore[no-any-return]
        if emit is not None and chunk.content and isinstance(chunk.content, str):
            emit(chunk.content)
        full = chunk if full is None else full + chunk  # type: ignore[assignment]
    if full is None:
        raise PlanningFailedError("the model returned an empty stream")
    # Streaming parses tool arguments leniently (a truncated '{"a": [' becomes {"a": []});
    # a call whose raw arguments are not complete JSON must not run.
    broken = {c["id"]: c for c in full.tool_call_chunks if not _is_json(c.get("args") or "{}")}
    return AIMessage(
        content=full.content,
        tool_calls=[c for c in full.tool_calls if c["id"] not in broken],
        invalid_tool_calls=[
            *full.invalid_tool_calls,
            *(
                invalid_tool_call(
                    name=c.get("name"), args=c.get("args"), id=c["id"], error="arguments are not valid JSON"
                )
                for c in broken.values()
            ),
        ],
        id=full.id,
        usage_metadata=full.usage_metadata,
    )


def _gist(text: str, limit: int = 200) -> str:
    """What a round's prose reply said, short enough to carry into the next round."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _prompt(query: str, svc: RunServices, window: WindowRef | None) -> list[BaseMessage]:
    memory, ctx = svc.memory, svc.ctx
    namespace = svc.namespace("planner")
    messages = None
    if window is not None and window["namespace"] == namespace:
        messages = memory.window(window, PLANNER_PROMPT)
        if messages is not None and window["current_id"]:
            return messages  # ends with the current request (cut to the budget if it is huge)
    if messages is None:  # no disclose node ran (direct call) or its messages are gone
        messages = memory.disclose(namespace, ctx.token_budget, system_prompt=PLANNER_PROMPT)
    if not any(isinstance(m, HumanMessage) and m.text.strip() == query for m in messages):
        messages.append(HumanMessage(content=query))
    return messages


def plan_with_model(
    query: str,
    svc: RunServices,
    specs: Mapping[str, AgentSpec],
    window: WindowRef | None = None,
) -> tuple[list[dict], str]:
    """Steps from the model's `create_plan` call (validated), or PlanningFailedError.

    `window` is the reference the disclose node stored; without it the window is disclosed here.
    A model fault or refusal (empty stream, garbage body, deadline, a 4xx such as a context
    overflow) is a PlanningFailedError too, carrying the fault's message: the planner then plans
    offline and tells the user why. A bad key or an unknown model is raised as it is: every later
    call would be refused too, so the run stops with the server's words and what to fix.
    """
    from tools.model.wire import call_deadline  # with the model's client (openai), only in model mode

    tools = {t.name: t for t in [*make_planning_tools(specs), *svc.agent_tools("planner")]}
    model = svc.model_for("plan")
    assert model is not None, "plan_with_model needs a model (Context.model)"
    bound = model.bind_tools(list(tools.values()), tool_choice="auto")  # servers drop tools without it
    messages = _prompt(query, svc, window)
    last_error = "no create_plan call"
    # all rounds together get PLAN_TIMEOUTS × PLANGRAPH_MODEL_TIMEOUT, then the offline planner plans
    with call_deadline(time.monotonic() + PLAN_TIMEOUTS * svc.ctx.model_timeout):
        for round_no in range(MAX_PLAN_ROUNDS):
            try:
                reply = stream_model(bound, messages)
            except ModelRejectedError as error:
                if error.kind in ("bad_key", "unknown_model"):
                    raise  # a setting to fix: every later call would be refused too
                raise PlanningFailedError(str(error)) from error
            except ModelFaultError as error:
                raise PlanningFailedError(str(error)) from error
            calls = reply.tool_calls or text_tool_calls(reply.text, {"create_plan": "steps"})
            if not calls and not reply.invalid_tool_calls:
                # the prose is summarised, not carried whole into the next round (it would fill the window)
                messages.append(AIMessage(content=_gist(reply.text)))
                messages.append(HumanMessage(content=NUDGE))
                continue
            messages.append(
                reply if reply.tool_calls or not calls else AIMessage(content="", tool_calls=calls)
            )
            for bad in reply.invalid_tool_calls:
                last_error = f"tool call {bad.get('name')!r} had arguments that are not valid JSON"
                messages.append(
                    ToolMessage(
                        content=f"Error: {last_error}; resend it with JSON arguments.",
                        tool_call_id=bad.get("id") or "",
                        status="error",
                    )
                )
            for call in calls:
                tool = tools.get(call["name"])
                if tool is None:
                    last_error = f"unknown tool {call['name']!r}; available: {', '.join(tools)}"
                    messages.append(
                        ToolMessage(
                            content=f"Error: {last_error}", tool_call_id=call["id"] or "", status="error"
                        )
                    )
                    continue
                result: ToolMessage = tool.invoke({**call, "type": "tool_call"})
                messages.append(result)
                if call["name"] == "create_plan":
                    if result.status == "error":
                        last_error = str(result.content)
                    else:
                        steps = json.loads(str(result.content))["steps"]
                        return steps, f"模型规划（第 {round_no + 1} 轮）"
            log.info("planning round %s rejected: %s", round_no + 1, last_error)
    raise PlanningFailedError(f"模型在 {MAX_PLAN_ROUNDS} 轮内没有给出有效计划（最后的问题：{last_error}）")
