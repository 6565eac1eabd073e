"""The whole-call deadline against a server that keeps the connection alive with pings (issue 17 items 1, 3).

llama_cpp.server (sse-starlette) sends `: ping - <time>` SSE comments while it works; a read
timeout never fires on such a stream. Each call must still end at `PLANGRAPH_MODEL_TIMEOUT`,
on the sync path (`invoke` / `stream`, what the graph's nodes use under `run` and `arun` alike)
and the async one (`ainvoke` / `astream`), and a run cut there stops with a clear model fault
and a state that `resume` finishes. The scripted server is real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from graphs.context import Context
from graphs.services import chat_model
from plangraph.errors import ServiceUnavailableError
from plangraph.runner import PlanRunner
from tests.support.openai_server import (
    ScriptedOpenAIServer,
    fault_garbage_body,
    fault_keepalive_stall,
    fault_pings_only,
    fault_status,
    reply_text,
    reply_tool_call,
)
from tools.faults import ModelDeadlineError, ModelFaultError, ModelRejectedError, retryable
from tools.model import Endpoint

FOREVER = 3600.0  # the server pings until it is stopped
CUT = "1 秒内没有答完.*PLANGRAPH_MODEL_TIMEOUT"
QUESTION = "分布式光伏余电上网电价怎么定？"
KNOWLEDGE_PLAN = {
    "steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答余电上网电价政策", "dependsOn": []}]
}


def _model(server: ScriptedOpenAIServer, **settings: Any) -> Any:
    ctx = Context(model="scripted", model_base_url=server.base_url, data_dir="unused", **settings)
    return chat_model(ctx, "step", Endpoint(ctx.model_base_url, ctx.model, "test", ctx.model_context))


async def _collect(stream: Any) -> list[Any]:
    return [chunk async for chunk in stream]


def test_pings_forever_before_any_event_are_cut_at_the_deadline():
    with ScriptedOpenAIServer([fault_pings_only(FOREVER)], strict=False) as server:
        model = _model(server, model_timeout=1.0)
        started = time.monotonic()
        with pytest.raises(ModelDeadlineError, match=CUT) as cut:
            list(model.stream("你好"))
        took = time.monotonic() - started
    assert took < 3.0, took  # a ping every 0.1 s did not extend the 1 s deadline
    assert not retryable(cut.value)


def test_pings_then_an_empty_end_is_an_empty_answer_not_a_garbage_body():
    # what llama_cpp.server does on a context overflow after working a while: pings, then nothing
    with ScriptedOpenAIServer([fault_pings_only(0.3), fault_pings_only(0.3)]) as server:
        model = _model(server)
        with pytest.raises(ModelFaultError, match="空的回答.*PLANGRAPH_MODEL_CONTEXT") as sync_empty:
            model.invoke("你好")
        with pytest.raises(ModelFaultError, match="空的回答.*PLANGRAPH_MODEL_CONTEXT") as async_empty:
            asyncio.run(model.ainvoke("你好"))
    for raised in (sync_empty, async_empty):
        assert "不是 OpenAI 兼容" not in str(raised.value) and retryable(raised.value)


@pytest.mark.parametrize(
    "fault",
    [fault_pings_only(FOREVER), fault_keepalive_stall(FOREVER, ping_every=0.1)],
    ids=["pings-before-any-event", "pings-after-the-first-words"],
)
def test_async_calls_have_the_same_whole_call_deadline(fault):
    with ScriptedOpenAIServer([fault, fault], strict=False) as server:
        model = _model(server, model_timeout=1.0)

        async def both() -> list[float]:
            took = []
            for call in (lambda: model.ainvoke("你好"), lambda: _collect(model.astream("你好"))):
                started = time.monotonic()
                with pytest.raises(ModelDeadlineError, match=CUT):
                    await call()
                took.append(time.monotonic() - started)
            return took

        took = asyncio.run(both())
        assert len(server.requests) == 2
    assert max(took) < 3.0, took


def test_async_calls_quote_the_server_and_name_garbage_like_sync_ones():
    with ScriptedOpenAIServer(
        [fault_garbage_body(), fault_status(400, "Wrong type supplied for parameter 'tool_choice'")]
    ) as server:
        model = _model(server)
        with pytest.raises(ModelFaultError, match="不是 OpenAI 兼容的事件流.*502 Bad Gateway"):
            asyncio.run(_collect(model.astream("你好")))
        with pytest.raises(ModelRejectedError, match="HTTP 400.*Wrong type supplied") as refused:
            asyncio.run(model.ainvoke("你好"))
    assert refused.value.kind == "rejected"


def _planner(body: dict) -> bool:
    return any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))


class Pinging:
    """A server that pings forever on every call until `healthy`, then plans and answers one knowledge step."""

    def __init__(self) -> None:
        self.healthy = False

    def __call__(self, body: dict) -> Any:
        if not self.healthy:
            return fault_pings_only(FOREVER)
        if _planner(body):
            return reply_tool_call("create_plan", KNOWLEDGE_PLAN)
        return reply_text("根据资料[1]，余电上网电量按当地燃煤基准价结算。")


def _check_cut_then_resumed(error: pytest.ExceptionInfo, took: float, summary: str) -> None:
    message = str(error.value)
    assert "模型服务出错" in message and "1 秒内没有答完" in message, message
    assert "进度已保存" in message and "resume" in message, message
    # planning cut at 1 s (the offline planner plans), then the knowledge step's call cut at 1 s
    assert took < 15, took
    assert "余电上网" in summary


def test_a_run_on_a_server_that_pings_forever_stops_at_the_deadline_and_resumes(model_env, data_dir):
    server_script = Pinging()
    with ScriptedOpenAIServer(responder=server_script, strict=False) as server:
        model_env(server, timeout=1)
        with PlanRunner.open(user_id="u", conversation_id="pings") as runner:
            started = time.monotonic()
            with pytest.raises(ServiceUnavailableError) as stopped:
                runner.run(QUESTION)
            took = time.monotonic() - started
            server_script.healthy = True
            outcome = runner.resume()
    _check_cut_then_resumed(stopped, took, outcome.summary)


def test_the_async_runner_stops_at_the_same_deadline_and_resumes(model_env, data_dir):
    server_script = Pinging()

    async def run() -> tuple[pytest.ExceptionInfo, float, str]:
        async with PlanRunner.aopen(user_id="u", conversation_id="apings") as runner:
            started = time.monotonic()
            with pytest.raises(ServiceUnavailableError) as stopped:
                await runner.arun(QUESTION)
            took = time.monotonic() - started
            server_script.healthy = True
            outcome = await runner.aresume()
        return stopped, took, outcome.summary

    with ScriptedOpenAIServer(responder=server_script, strict=False) as server:
        model_env(server, timeout=1)
        stopped, took, summary = asyncio.run(run())
    _check_cut_then_resumed(stopped, took, summary)
