"""Model mode fills PV inputs the parser cannot read, against a real OpenAI-compatible server on 127.0.0.1.

The parser's values always stand; a model failure of any kind leaves exactly the offline result.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest

from graphs.context import Context
from graphs.services import chat_model
from nodes.agents import pv_calc, reverse_opt
from nodes.agents._pv import gather_fields
from nodes.kit.step import InMemoryAgentMemory, StepContext
from plangraph.runner import PlanRunner
from tests.support.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    fault_delay,
    fault_status,
    reply_malformed_tool_call,
    reply_text,
    reply_tool_call,
)
from tools.pv.inputs import merge_fields, parse_fields
from tools.pv.model_fields import PvInputs
from tools.pv.resolve import resolve_inputs

# Half a megawatt as a count of panels times their power: the parser reads no capacity here (it reads
# "半兆瓦" and "half a megawatt" since session 9), the model can.
HALF_MW = "杭州余杭区工商业厂房屋顶，大概能铺一千片500W的板子，帮我测算收益"
ENGLISH = "Commercial rooftop in Hangzhou Yuhang, room for a thousand 500-watt panels"
FILLED = "已根据您的描述识别出："
TOOL = PvInputs.__name__


def run_step(agent: Any, text: str, data_dir: Path, model: Any = None, progress: list | None = None) -> dict:
    """One step of `agent` on `text`, built the way the agent node builds it."""
    memories: dict[str, InMemoryAgentMemory] = {}

    def memory(name: str) -> InMemoryAgentMemory:
        return memories.setdefault(name, InMemoryAgentMemory(f"{name}_u1_c1"))

    ctx = StepContext(
        plan_id="plan-1",
        seq_no=0,
        agent_name=agent.AGENT.name,
        requirement=text,
        user_query=text,
        plan_context={"answers": {}},
        deps={},
        user_id="u1",
        conversation_id="c1",
        data_dir=data_dir,
        memory=memory(agent.AGENT.name),
        emit=(progress if progress is not None else []).append,
        model=model,
    )
    return dict(agent.AGENT.run(ctx))


@pytest.fixture
def model_for(data_dir, monkeypatch):
    """The production chat model (`graphs.services.chat_model`) pointed at a scripted server."""

    def make(server: ScriptedOpenAIServer, timeout: float = 5.0) -> Any:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        return chat_model(Context(model="scripted", model_timeout=timeout))

    return make


def test_the_model_fills_the_capacity_the_parser_cannot_read(model_for, data_dir):
    offline = run_step(pv_calc, HALF_MW, data_dir)
    assert offline["status"] == "interrupted" and offline["context"]["missing"] == ["capacity_kw"]

    progress: list[str] = []
    with ScriptedOpenAIServer([reply_tool_call(TOOL, {"capacity_kw": 500})]) as server:
        done = run_step(pv_calc, HALF_MW, data_dir, model_for(server), progress)
        (request,) = server.requests
    assert done["status"] == "completed"
    assert done["context"]["inputs"]["capacity_kw"] == 500
    assert done["output"].startswith("光伏经济性测算结果（杭州市余杭区 · 工商业 · 500 kW）")
    assert f"{FILLED}装机容量 500 kW" in progress
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert HALF_MW in request["messages"][1]["content"]
    assert request["tool_choice"]["function"]["name"] == TOOL and request["stream"] is False
    properties = request["tools"][0]["function"]["parameters"]["properties"]
    assert "kW" in properties["capacity_kw"]["description"]


def test_english_phrasing_gives_place_type_and_capacity(model_for, data_dir):
    answer = {"location": "杭州市余杭区", "project_type": "工商业", "capacity_kw": 500}
    with ScriptedOpenAIServer([reply_tool_call(TOOL, answer)]) as server:
        done = run_step(pv_calc, ENGLISH, data_dir, model_for(server))
    assert done["status"] == "completed"
    inputs = done["context"]["inputs"]
    assert (inputs["location"], inputs["project_type"], inputs["capacity_kw"]) == (
        "杭州市余杭区",
        "工商业",
        500,
    )


def test_the_parser_wins_a_conflict_and_the_model_only_adds_what_it_missed(model_for, data_dir):
    text = (
        "杭州余杭区工商业屋顶装机300kW，自用部分每度电付0.9"  # "付0.9" (no unit) is left unread by the parser
    )
    answer = {"location": "上海市", "project_type": "户用", "capacity_kw": 500, "electricity_price": 0.9}
    progress: list[str] = []
    with ScriptedOpenAIServer([reply_tool_call(TOOL, answer)]) as server:
        done = run_step(pv_calc, text, data_dir, model_for(server), progress)
    inputs = done["context"]["inputs"]
    assert (inputs["location"], inputs["project_type"], inputs["capacity_kw"]) == (
        "杭州市余杭区",
        "工商业",
        300,
    )
    assert inputs["electricity_price"] == 0.9
    assert "electricity_price" not in done["context"]["defaulted"]
    assert [p for p in progress if p.startswith(FILLED)] == [f"{FILLED}自用电价 0.9 元/kWh"]


FALLBACKS = {
    "malformed JSON": [reply_malformed_tool_call(TOOL, '{"capacity_kw": 500,')],
    "text instead of the tool call": [reply_text("大约 500 kW。")],
    "HTTP 500 (one request: the client does not retry, the node's policy would)": [
        fault_status(500, retry_after=0.01)
    ],
    "out of range": [reply_tool_call(TOOL, {"capacity_kw": 5_000_000})],
    "one invalid value among valid ones": [
        reply_tool_call(TOOL, {"capacity_kw": 500, "self_consumption": 80})
    ],
    "an unknown place": [reply_tool_call(TOOL, {"location": "亚特兰蒂斯", "capacity_kw": 500})],
    "household capacity over 100 kW": [reply_tool_call(TOOL, {"capacity_kw": 500, "project_type": "户用"})],
}


@pytest.mark.parametrize("script", FALLBACKS.values(), ids=FALLBACKS.keys())
def test_a_failing_model_leaves_exactly_the_offline_result(script: list[Reply], model_for, data_dir, caplog):
    text = "帮我测算大概一千片500W板子的屋顶光伏"  # place and type missing: offline asks for them and the capacity
    offline = run_step(pv_calc, text, data_dir)
    progress: list[str] = []
    with ScriptedOpenAIServer(script) as server:
        with caplog.at_level(logging.WARNING, logger="plangraph.pv_model_fields"):
            result = run_step(pv_calc, text, data_dir, model_for(server), progress)
        assert server.remaining == 0
    assert result["status"] == "interrupted"
    assert (result["output"], result["context"]["missing"]) == (
        offline["output"],
        offline["context"]["missing"],
    )
    assert result["context"]["missing"] == ["location", "project_type", "capacity_kw"]
    assert not any(p.startswith(FILLED) for p in progress)
    assert "using the parser's fields alone" in caplog.text


def test_a_timeout_falls_back_without_failing_the_step(model_for, data_dir, caplog):
    with ScriptedOpenAIServer([fault_delay(3.0)]) as server:
        with caplog.at_level(logging.WARNING, logger="plangraph.pv_model_fields"):
            result = run_step(pv_calc, HALF_MW, data_dir, model_for(server, timeout=0.3))
    assert result["status"] == "interrupted" and result["context"]["missing"] == ["capacity_kw"]
    assert "ModelDeadlineError" in caplog.text and server.remaining == 0


def test_one_model_call_per_step_though_the_agent_gathers_fields_twice(model_for, data_dir):
    text = "杭州余杭区工商业屋顶，大约一千片500W的板子，造价降到多少才能让IRR达到8%"
    with ScriptedOpenAIServer([reply_tool_call(TOOL, {"capacity_kw": 500})]) as server:
        done = run_step(reverse_opt, text, data_dir, model_for(server))
        requests = server.requests
    assert done["status"] == "completed" and done["context"]["inputs"]["capacity_kw"] == 500
    assert len(requests) == 1  # a second request would also exhaust the script (ScriptError)
    assert "IRR" not in requests[0]["messages"][1]["content"]  # the target is stripped like for the parser


@pytest.mark.parametrize(
    "text",
    [
        "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW",  # the parser read everything
        "其他参数不变，将地址更换到上海市后重新进行测算",  # the rest comes from the earlier calculation
    ],
)
def test_no_model_call_when_the_parser_needs_no_help(text, model_for, data_dir):
    with ScriptedOpenAIServer([]) as server:  # strict: any request is a ScriptError at exit
        with_model = run_step(pv_calc, text, data_dir, model_for(server))
        assert server.requests == []
    offline = run_step(pv_calc, text, data_dir)
    assert (with_model["status"], with_model["output"]) == (offline["status"], offline["output"])


@pytest.mark.parametrize(
    "text", [HALF_MW, ENGLISH, "帮我进行光伏测算", "杭州余杭区500kW工商业，电价0.85元/度，自发自用80%"]
)
def test_offline_fields_are_the_parsers_alone(text, data_dir):
    memory = InMemoryAgentMemory()
    ctx = StepContext(
        plan_id="p",
        seq_no=0,
        agent_name="pv_calc",
        requirement=text,
        user_query=text,
        plan_context={"answers": {"0": ["装机规模2MW"]}, "location": "上海市"},
        deps={},
        user_id="u",
        conversation_id="c",
        data_dir=data_dir,
        memory=memory,
    )
    expected: dict[str, Any] = {"location": "上海市"}
    for part in (text, text, "装机规模2MW"):
        expected = merge_fields(expected, parse_fields(part))
    assert gather_fields(ctx) == expected


def _bounds(schema: dict[str, Any]) -> tuple[float | None, float | None, bool]:
    bounded = next(option for option in schema["anyOf"] if option["type"] != "null")
    low = bounded.get("minimum", bounded.get("exclusiveMinimum"))
    return low, bounded.get("maximum"), "exclusiveMinimum" in bounded


@pytest.mark.parametrize(
    "name",
    [
        n
        for n, s in PvInputs.model_json_schema()["properties"].items()
        if n != "capacity_kw" and ("maximum" in str(s) or "inimum" in str(s))
    ],
)
def test_the_schema_ranges_are_the_ranges_pv_resolve_accepts(name):
    """A model value inside the schema is one resolve_inputs accepts; one just outside, it asks about."""
    base = {"location": "杭州市余杭区", "project_type": "工商业", "capacity_kw": 500.0}
    low, high, exclusive = _bounds(PvInputs.model_json_schema()["properties"][name])
    if high is not None:
        assert resolve_inputs({**base, name: high}).inputs is not None
        outside = high + (1 if isinstance(high, int) else high * 0.01)
        assert resolve_inputs({**base, name: outside}).missing == [name]
    if low is not None:
        assert resolve_inputs({**base, name: low}).missing == ([name] if exclusive else [])
        if not exclusive:
            assert resolve_inputs({**base, name: low - 0.001}).missing == [name]


_CURRENT = re.compile(r"当前 EP（\*id=(.*?)）：\n(digraph G \{.*?\n\})\n", re.S)
PLAN = {"steps": [{"seqNo": 0, "agentName": "pv_calc", "requirement": HALF_MW, "dependsOn": []}]}


def respond(body: dict) -> Reply:
    """Planner: one pv_calc step; input fields: 500 kW; reflection: keep the plan; else a summary."""
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "create_plan" in tools:
        return reply_tool_call("create_plan", PLAN)
    if TOOL in tools:
        return reply_tool_call(TOOL, {"capacity_kw": 500})
    if "执行计划（EP）维护者" in body["messages"][0]["content"]:
        ep_id, graph = _CURRENT.search(body["messages"][-1]["content"]).groups()
        return reply_text(f"@epupdatelog@\n无需更新\n@epupdatelog@\n@EP@\n*id={ep_id}\n*graph={graph}@EP@")
    return reply_text("测算完成。")


def test_a_model_mode_run_computes_what_offline_would_ask_for(model_env, data_dir):
    with ScriptedOpenAIServer([], responder=respond) as server:
        model_env(server)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="f1") as runner:
            outcome = runner.run(HALF_MW, on_chunk=chunks.append)
        requests = server.requests
    assert outcome.interrupt is None
    step = outcome.plan["steps"][0]
    assert step["status"] == "completed" and step["result"]["context"]["inputs"]["capacity_kw"] == 500
    assert any(c["index"] == 0 and c["content"] == f"{FILLED}装机容量 500 kW" for c in chunks)
    assert sum(TOOL in str(r.get("tools")) for r in requests) == 1
