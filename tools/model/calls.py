"""Tool calls a model wrote as text, and the forced-tool request each kind of server accepts.

Small models served with `tool_choice="auto"` often answer with the call's JSON in the message
text instead of a tool call. `text_tool_calls` reads such a JSON object back as a call, so "auto"
has a fallback that is not "no call".

`tool_choice` for one forced tool: OpenAI and vLLM accept the object form
(`{"type": "function", "function": {"name": ...}}`); llama.cpp's `llama-server` rejects it
("Wrong type supplied for parameter 'tool_choice'") but accepts "required". `FORCED_CHOICES`
lists the forms to try in order; `invoke_forced` tries them, remembers per model which one the
server took, and reads a text-written call back when the server only honours "auto".
"""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.tool import ToolCall

from tools.faults import ModelRejectedError

__all__ = ["FORCED_CHOICES", "invoke_forced", "text_tool_calls"]

log = logging.getLogger("plangraph.model")

FORCED_CHOICES = ("named", "required", "auto")
_lock = threading.Lock()
_OBJECT = re.compile(r"\{.*\}", re.S)


def text_tool_calls(text: str, signatures: Mapping[str, str | tuple[str, ...]]) -> list[ToolCall]:
    """Calls written as JSON in `text`: `{"name": n, "arguments": {...}}` or the bare arguments of a tool.

    `signatures` maps each tool name to the argument keys that identify its bare arguments
    (e.g. `{"create_plan": "steps"}`); a bare object is read as the first tool it has a key of.
    """
    found = _OBJECT.search(text or "")
    if found is None:
        return []
    try:
        value = json.loads(found.group(0))
    except json.JSONDecodeError:
        return []
    if not isinstance(value, dict):
        return []
    name, args = value.get("name"), value.get("arguments", value.get("parameters"))
    if isinstance(name, str) and name in signatures and isinstance(args, dict):
        return [ToolCall(name=name, args=args, id=f"text_{uuid.uuid4().hex[:8]}", type="tool_call")]
    for tool, keys in signatures.items():
        if any(k in value for k in ((keys,) if isinstance(keys, str) else keys)):
            return [ToolCall(name=tool, args=value, id=f"text_{uuid.uuid4().hex[:8]}", type="tool_call")]
    return []


def _choice(form: str, name: str) -> str:
    return name if form == "named" else form


def invoke_forced(
    model: BaseChatModel,
    tool: Any,
    name: str,
    keys: tuple[str, ...],
    messages: Sequence[BaseMessage],
    **kwargs: Any,
) -> AIMessage:
    """One call that must call `name`: the forced `tool_choice` form this server accepts, else "auto".

    `keys` are arguments of the tool that identify its arguments written as text. A server that
    refuses a form with HTTP 400 is asked again with the next form of `FORCED_CHOICES`; the form it
    took is remembered on the model's endpoint (`tools.model.wire.Endpoint.forced_form`).
    """
    import openai  # the model's client: imported with the model, never on an offline run

    endpoint = getattr(model, "endpoint", None)
    with _lock:
        start = getattr(endpoint, "forced_form", None) or FORCED_CHOICES[0]
    forms = FORCED_CHOICES[FORCED_CHOICES.index(start) :]
    for form in forms:
        try:
            reply = model.bind_tools([tool], tool_choice=_choice(form, name), **kwargs).invoke(list(messages))
        except (ModelRejectedError, openai.BadRequestError) as error:
            status = getattr(error, "status", None) or getattr(error, "status_code", None)
            if form == forms[-1] or status != 400:
                raise
            log.info(
                "tool_choice %r refused (%s); trying %r",
                form,
                error,
                FORCED_CHOICES[FORCED_CHOICES.index(form) + 1],
            )
            continue
        if endpoint is not None:
            with _lock:
                endpoint.forced_form = form
        assert isinstance(reply, AIMessage)
        if not reply.tool_calls:
            calls = text_tool_calls(reply.text, {name: keys})
            if calls:
                return AIMessage(content="", tool_calls=calls, id=reply.id)
        return reply
    raise AssertionError("unreachable: the last form re-raises")
