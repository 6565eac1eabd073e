"""The model wire against a real OpenAI-compatible server on 127.0.0.1 (tests/support/openai_server.py).

What real servers (llama.cpp's llama-server and llama_cpp.server, vLLM, OpenAI) do that the
project has to survive: they need `max_tokens`, refuse an object `tool_choice`, stall with
keep-alive pings, answer an overflow with an empty stream or a 400 in their own words, and refuse
bad keys and unknown models. Each test builds the model the way a run does (`graphs.services`).
"""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from graphs.context import Context
from graphs.services import chat_model
from tests.support.openai_server import (
    ScriptedOpenAIServer,
    fault_empty_stream,
    fault_garbage_body,
    fault_keepalive_stall,
    fault_status,
    reply_text,
    reply_tool_call,
)
from tools.faults import ModelDeadlineError, ModelFaultError, ModelRejectedError, retryable
from tools.model import Endpoint
from tools.model.calls import invoke_forced


def _ctx(server: ScriptedOpenAIServer, **settings) -> Context:
    return Context(model="scripted", model_base_url=server.base_url, data_dir="unused", **settings)


def _model(server, kind="step", key="test", **settings):
    ctx = _ctx(server, **settings)
    return chat_model(ctx, kind, Endpoint(ctx.model_base_url, ctx.model, key, ctx.model_context))


def test_each_kind_of_call_sends_its_output_bound_as_both_parameters(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with ScriptedOpenAIServer([reply_text("好")] * 4) as server:
        bounds = {"plan": 301, "step": 302, "summary": 303, "gist": 44}
        settings = {f"model_max_tokens_{kind}": n for kind, n in bounds.items()}
        for kind in bounds:
            _model(server, kind, **settings).invoke("你好")
        sent = server.requests
    assert [(r["max_tokens"], r["max_completion_tokens"]) for r in sent] == [(n, n) for n in bounds.values()]
    assert all(r["temperature"] == 0.2 for r in sent)


def test_a_stall_with_keepalive_pings_is_cut_at_the_deadline_and_not_retried():
    with ScriptedOpenAIServer([fault_keepalive_stall(30.0, ping_every=0.1)], strict=False) as server:
        model = _model(server, model_timeout=1.0)
        started = time.monotonic()
        with pytest.raises(ModelDeadlineError, match="1 秒内没有答完.*PLANGRAPH_MODEL_TIMEOUT") as cut:
            list(model.stream("你好"))
        took = time.monotonic() - started
        assert len(server.requests) == 1
    assert took < 2.5, took  # pings every 0.1 s did not extend the 1 s deadline
    assert not retryable(cut.value)  # the node does not wait another whole deadline


def test_a_server_that_never_answers_is_cut_at_the_deadline_too():
    from tests.support.openai_server import fault_delay

    with ScriptedOpenAIServer([fault_delay(30.0)], strict=False) as server:
        started = time.monotonic()
        with pytest.raises(ModelDeadlineError):
            _model(server, model_timeout=0.5).invoke("你好")
    assert time.monotonic() - started < 2.0


def test_empty_stream_and_garbage_body_are_model_faults_that_say_what_came_back():
    with ScriptedOpenAIServer([fault_empty_stream(), fault_garbage_body(), fault_garbage_body()]) as server:
        model = _model(server)
        with pytest.raises(ModelFaultError, match="空的回答.*PLANGRAPH_MODEL_CONTEXT"):
            list(model.stream("你好"))
        with pytest.raises(
            ModelFaultError, match="不是 OpenAI 兼容的事件流.*502 Bad Gateway.*OPENAI_BASE_URL"
        ):
            model.invoke("你好")
        with pytest.raises(ModelFaultError, match="不是 OpenAI 兼容的 JSON.*OPENAI_BASE_URL"):
            model.model_copy(update={"streaming": False}).invoke("你好")


def test_refusals_quote_the_server_and_name_the_cause(monkeypatch):
    with ScriptedOpenAIServer(
        api_key="right", reject_unknown_models=True, models=("other",), strict=False
    ) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "wrong")
        with pytest.raises(
            ModelRejectedError, match="拒绝了密钥.*Incorrect API key.*OPENAI_API_KEY"
        ) as bad_key:
            _model(server, key="wrong").invoke("你好")
        monkeypatch.setenv("OPENAI_API_KEY", "right")
        with pytest.raises(
            ModelRejectedError, match="不认识这个模型.*scripted.*does not exist.*PLANGRAPH_MODEL"
        ) as unknown:
            _model(server, key="right").invoke("你好")
    assert (bad_key.value.kind, unknown.value.kind) == ("bad_key", "unknown_model")
    with ScriptedOpenAIServer(
        [fault_status(400, "Wrong type supplied for parameter 'tool_choice'")]
    ) as server:
        with pytest.raises(ModelRejectedError, match="HTTP 400.*Wrong type supplied") as other:
            _model(server).invoke("你好")
    assert other.value.kind == "rejected" and not retryable(other.value)


def test_a_server_side_overflow_is_named_with_the_servers_words():
    # PLANGRAPH_MODEL_CONTEXT says 4096, the server really has 300
    with ScriptedOpenAIServer(context_length=300, strict=False) as server:
        with pytest.raises(
            ModelRejectedError,
            match="上下文窗口.*exceeds the available context size.*PLANGRAPH_MODEL_CONTEXT",
        ) as over:
            _model(server, model_context=4096).invoke("光伏" * 200)
    assert over.value.kind == "overflow"


def test_the_window_from_v1_models_fits_every_request_and_drops_old_rounds_first():
    seen = []

    def respond(body):
        seen.append(body)
        return reply_text("好的。")

    long_round = "很长的工具结果。" * 120
    with ScriptedOpenAIServer(responder=respond, context_length=900) as server:
        model = _model(server, model_max_tokens_step=200)
        assert model.endpoint.window() == 900  # from /v1/models (vLLM's max_model_len)
        messages = [SystemMessage("你是助手。"), HumanMessage("第一个问题：装机容量 500kW 的收益？")]
        for n in range(4):
            messages += [
                AIMessage("", tool_calls=[{"name": "search", "args": {"q": str(n)}, "id": f"c{n}"}]),
                ToolMessage(long_round, tool_call_id=f"c{n}"),
            ]
        messages.append(HumanMessage("请回答。"))
        model.invoke(messages)  # no 400: fitted before sending
        model.invoke(messages)  # the second request uses the gauge learned from the first usage
    body = seen[-1]
    from tests.support.openai_server import prompt_tokens

    assert prompt_tokens(body["messages"]) + body["max_tokens"] <= 900
    roles = [m["role"] for m in body["messages"]]
    assert (
        roles[0] == "system"
        and roles[-1] == "user"
        and body["messages"][1]["content"].startswith("第一个问题")
    )
    assert roles.count("tool") < 4  # earlier rounds were dropped, pairs kept (the server checks pairing)


def test_a_request_that_cannot_fit_is_refused_before_sending():
    with ScriptedOpenAIServer(context_length=200) as server:
        with pytest.raises(
            ModelRejectedError, match="放不进模型的上下文窗口.*PLANGRAPH_MODEL_CONTEXT"
        ) as refused:
            _model(server).invoke([SystemMessage("你是助手。" * 150), HumanMessage("好")])
        assert server.requests == []
    assert refused.value.kind == "overflow"


class Fields(BaseModel):
    """Fields."""

    capacity_kw: float | None = None


def test_a_forced_tool_falls_back_to_a_form_the_server_takes_and_remembers_it():
    def llama_server(body):  # rejects an object tool_choice, as llama-server does
        if isinstance(body.get("tool_choice"), dict):
            return fault_status(400, "Wrong type supplied for parameter 'tool_choice'")
        return reply_tool_call("Fields", {"capacity_kw": 500})

    with ScriptedOpenAIServer(responder=llama_server) as server:
        model = _model(server)
        first = invoke_forced(model, Fields, "Fields", ("capacity_kw",), [HumanMessage("半兆瓦")])
        second = invoke_forced(model, Fields, "Fields", ("capacity_kw",), [HumanMessage("半兆瓦")])
        choices = [r.get("tool_choice") for r in server.requests]
    assert first.tool_calls[0]["args"] == second.tool_calls[0]["args"] == {"capacity_kw": 500}
    assert isinstance(choices[0], dict) and choices[1:] == ["required", "required"]


def test_a_call_written_as_text_under_auto_is_read_back():
    def auto_only(body):
        if body.get("tool_choice") != "auto":
            return fault_status(400, "tool_choice must be auto")
        return reply_text('好的：{"capacity_kw": 500}')

    with ScriptedOpenAIServer(responder=auto_only) as server:
        reply = invoke_forced(_model(server), Fields, "Fields", ("capacity_kw",), [HumanMessage("半兆瓦")])
        assert [r.get("tool_choice") for r in server.requests][-1] == "auto"
    assert reply.tool_calls[0]["name"] == "Fields" and reply.tool_calls[0]["args"] == {"capacity_kw": 500}
