"""The scripted OpenAI-compatible server, driven through ChatOpenAI and the raw openai client."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
import time
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import OpenAIEmbeddings
from pydantic import SecretStr

from tests.support.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    ScriptError,
    count_tokens,
    fault_delay,
    fault_status,
    fault_truncated_stream,
    prompt_tokens,
    reply_malformed_tool_call,
    reply_text,
    reply_tool_call,
    reply_tool_calls,
    reply_unknown_tool_call,
    tool_pairing_error,
)


@tool
def search_block(query: str, todo_id: str | None = None) -> str:
    """Search memory blocks."""
    return query


@tool
def load(data_id: str) -> str:
    """Load stored data by id."""
    return data_id


def raw_client(server: ScriptedOpenAIServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=10.0)


def test_chat_model_gets_text_and_usage_from_the_documented_count() -> None:
    with ScriptedOpenAIServer([reply_text("测算完成：年发电量 55 万 kWh。")]) as server:
        answer = server.chat_model().invoke([SystemMessage("你是光伏专家"), HumanMessage("测算一下")])

    assert answer.content == "测算完成：年发电量 55 万 kWh。"
    (body,) = server.requests
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["model"] == "scripted"
    # 4 per message + "你是光伏专家" (6 CJK) + "测算一下" (4 CJK)
    assert answer.usage_metadata is not None
    assert answer.usage_metadata["input_tokens"] == prompt_tokens(body["messages"]) == 18


def test_prompt_counter_can_be_replaced_to_match_the_code_under_test() -> None:
    with ScriptedOpenAIServer(
        [reply_text("好")], prompt_counter=lambda messages: 100 * len(messages)
    ) as server:
        answer = server.chat_model().invoke([SystemMessage("系统"), HumanMessage("问题")])
    assert answer.usage_metadata is not None
    assert answer.usage_metadata["input_tokens"] == 200


def test_bound_tools_receive_tool_calls_with_generated_and_given_ids() -> None:
    script = [
        reply_tool_call("search_block", {"query": "装机容量"}),
        reply_tool_calls(
            [("search_block", {"query": "电价"}), ("load", {"data_id": "store://1"}, "call_mine")]
        ),
    ]
    with ScriptedOpenAIServer(script) as server:
        model = server.chat_model().bind_tools([search_block, load])
        first = model.invoke("查装机容量")
        second = model.invoke("查电价并加载")

    assert first.tool_calls == [
        {"name": "search_block", "args": {"query": "装机容量"}, "id": "call_1_0", "type": "tool_call"}
    ]
    assert [(c["name"], c["args"], c["id"]) for c in second.tool_calls] == [
        ("search_block", {"query": "电价"}, "call_2_0"),
        ("load", {"data_id": "store://1"}, "call_mine"),
    ]
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} == {"search_block", "load"}


def test_streamed_tool_calls_arrive_in_fragments_and_assemble() -> None:
    script = [
        reply_tool_calls([("search_block", {"query": "上海 光伏 补贴"}), ("load", {"data_id": "store://7"})])
    ]
    with ScriptedOpenAIServer(script) as server:
        chunks = list(server.chat_model().bind_tools([search_block, load]).stream("查补贴"))

    fragments = [c for chunk in chunks for c in chunk.tool_call_chunks if c["name"] is None]
    assert len(fragments) > 4  # arguments came in several pieces, not one
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert isinstance(merged, AIMessage)
    assert [(c["name"], c["args"]) for c in merged.tool_calls] == [
        ("search_block", {"query": "上海 光伏 补贴"}),
        ("load", {"data_id": "store://7"}),
    ]
    assert server.requests[0]["stream"] is True


def test_streamed_text_arrives_as_several_chunks_with_usage_when_asked() -> None:
    with ScriptedOpenAIServer(
        [reply_text("内部收益率约为 8.5%，回收期 7 年。")], stream_chunk_chars=3
    ) as server:
        chunks = list(server.chat_model(stream_usage=True).stream("结果如何"))

    texts = [c.content for c in chunks if c.content]
    assert len(texts) >= 5
    assert "".join(texts) == "内部收益率约为 8.5%，回收期 7 年。"
    assert server.requests[0]["stream_options"] == {"include_usage": True}
    usage = [c.usage_metadata for c in chunks if c.usage_metadata]
    assert usage and usage[-1]["input_tokens"] == prompt_tokens(server.requests[0]["messages"])


def test_server_error_surfaces_after_the_clients_retries() -> None:
    script = [fault_status(500, retry_after=0.01), fault_status(500, "上游模型崩溃", retry_after=0.01)]
    with ScriptedOpenAIServer(script) as server:
        with pytest.raises(openai.InternalServerError, match="上游模型崩溃"):
            server.chat_model(max_retries=1).invoke("你好")

    assert len(server.requests) == 2  # first try + one retry
    assert server.remaining == 0


def test_rate_limit_with_retry_after_recovers_on_retry() -> None:
    with ScriptedOpenAIServer([fault_status(429, retry_after=0.05), reply_text("好的")]) as server:
        started = time.monotonic()
        answer = server.chat_model(max_retries=1).invoke("你好")

    assert answer.content == "好的"
    assert time.monotonic() - started >= 0.05
    assert len(server.requests) == 2


def test_delay_beyond_client_timeout_raises_and_server_stops_promptly() -> None:
    server = ScriptedOpenAIServer([fault_delay(30)])
    with server:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            server.chat_model(timeout=0.3).invoke("你好")
        assert time.monotonic() - started < 5
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 2  # the pending 30 s delay did not hold up shutdown


def test_delay_within_timeout_then_answers() -> None:
    with ScriptedOpenAIServer([fault_delay(0.2, then=reply_text("迟到的回答"))]) as server:
        assert server.chat_model(timeout=5).invoke("你好").content == "迟到的回答"


def test_exhausted_script_fails_at_once_with_a_clear_error_and_on_exit() -> None:
    server = ScriptedOpenAIServer([reply_text("唯一的回答")])
    with pytest.raises(ScriptError, match="script exhausted: chat request #2"):
        with server:
            model = server.chat_model(max_retries=3)
            model.invoke("第一次")
            with pytest.raises(openai.InternalServerError, match="script exhausted"):
                model.invoke("第二次")
    assert len(server.requests) == 2  # x-should-retry: false, so no retries


def test_responder_answers_from_the_request_and_its_crash_is_reported() -> None:
    def echo(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"]
        if last == "崩溃":
            raise KeyError("missing")
        return reply_text(f"收到：{last}")

    server = ScriptedOpenAIServer(responder=echo)
    with pytest.raises(ScriptError, match="responder raised KeyError"):
        with server:
            assert server.chat_model().invoke("你好").content == "收到：你好"
            with pytest.raises(openai.InternalServerError, match="responder raised KeyError"):
                server.chat_model().invoke("崩溃")


def test_two_servers_at_once_use_different_ports_and_scripts() -> None:
    with ScriptedOpenAIServer([reply_text("甲")]) as one, ScriptedOpenAIServer([reply_text("乙")]) as two:
        assert one.port != two.port
        assert one.base_url.startswith("http://127.0.0.1:") and one.base_url.endswith("/v1")
        assert two.chat_model().invoke("?").content == "乙"
        assert one.chat_model().invoke("?").content == "甲"


def test_requests_record_what_the_model_saw_including_tool_pairs() -> None:
    history = [
        SystemMessage("你是光伏专家"),
        HumanMessage("查装机容量"),
        AIMessage("", tool_calls=[{"name": "search_block", "args": {"query": "装机"}, "id": "call_a"}]),
        ToolMessage("500kW", tool_call_id="call_a"),
    ]
    with ScriptedOpenAIServer([reply_text("装机容量为 500kW")]) as server:
        server.chat_model().bind_tools([search_block]).invoke(history)

    messages = server.requests[0]["messages"]
    assert sum(m["role"] == "system" for m in messages) == 1
    assert messages[2]["tool_calls"][0]["id"] == messages[3]["tool_call_id"] == "call_a"
    assert tool_pairing_error(messages) is None


def test_unpaired_tool_call_is_rejected_like_the_real_api_without_using_the_script() -> None:
    dangling: Any = [
        {"role": "user", "content": "查"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_x", "type": "function", "function": {"name": "load", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "继续"},
    ]
    orphan: Any = [{"role": "tool", "tool_call_id": "call_y", "content": "x"}]
    with ScriptedOpenAIServer([reply_text("合法请求的回答")]) as server:
        with raw_client(server) as client:
            with pytest.raises(openai.BadRequestError, match="call_x"):
                client.chat.completions.create(model="scripted", messages=dangling)
            with pytest.raises(openai.BadRequestError, match="role 'tool'"):
                client.chat.completions.create(model="scripted", messages=orphan)
            assert server.remaining == 1  # rejected before the model: the reply is still scripted
            valid = client.chat.completions.create(model="scripted", messages=dangling[:1])
    assert valid.choices[0].message.content == "合法请求的回答"


def test_truncated_stream_breaks_the_client_mid_answer() -> None:
    with ScriptedOpenAIServer([fault_truncated_stream("部分回答"), fault_truncated_stream("半截")]) as server:
        received = []
        with pytest.raises(openai.APIConnectionError):
            for chunk in server.chat_model().stream("你好"):
                received.append(chunk.content)
        assert "".join(received) == "部分回答"
        with pytest.raises(openai.APIConnectionError):
            server.chat_model().invoke("你好")  # non-streaming: body cut short


def test_malformed_arguments_and_unknown_tools_reach_the_client() -> None:
    script = [
        reply_malformed_tool_call("search_block", '{"query": "未闭合'),
        reply_unknown_tool_call("delete_all"),
    ]
    with ScriptedOpenAIServer(script) as server:
        model = server.chat_model().bind_tools([search_block])
        broken = model.invoke("查")
        unknown = model.invoke("查")

    assert broken.tool_calls == []
    assert broken.invalid_tool_calls[0]["args"] == '{"query": "未闭合'
    assert unknown.tool_calls[0]["name"] == "delete_all"


def test_scripted_call_to_an_unbound_tool_is_flagged_as_a_script_bug() -> None:
    server = ScriptedOpenAIServer([reply_tool_call("serch_block", {"query": "x"})])
    with pytest.raises(ScriptError, match="serch_block"):
        with server:
            with pytest.raises(openai.InternalServerError, match="reply_unknown_tool_call"):
                server.chat_model().bind_tools([search_block]).invoke("查")


def test_embeddings_are_deterministic_unit_vectors_of_the_configured_size() -> None:
    with ScriptedOpenAIServer(embedding_dim=12) as server:
        embedder = OpenAIEmbeddings(
            model="scripted",
            base_url=server.base_url,
            api_key=SecretStr("test"),
            check_embedding_ctx_length=False,
        )
        a, b, a_again = embedder.embed_documents(["杭州光伏", "上海光伏", "杭州光伏"])
        with raw_client(server) as client:
            raw = client.embeddings.create(model="scripted", input="杭州光伏", encoding_format="float")
            wide = client.embeddings.create(model="scripted", input=["x"], dimensions=32)

    assert len(a) == 12 and a == pytest.approx(a_again) and a != pytest.approx(b)
    assert math.isclose(sum(v * v for v in a), 1.0, rel_tol=1e-5)
    assert raw.data[0].embedding == pytest.approx(a, rel=1e-5)
    assert len(wide.data[0].embedding) == 32
    assert len(server.embedding_requests) == 3


def test_models_endpoint_lists_the_configured_models() -> None:
    with ScriptedOpenAIServer(models=("scripted", "scripted-large")) as server:
        with raw_client(server) as client:
            ids = [m.id for m in client.models.list()]
    assert ids == ["scripted", "scripted-large"]


def test_async_client_path_works() -> None:
    with ScriptedOpenAIServer([reply_text("异步回答")]) as server:
        answer = asyncio.run(server.chat_model().ainvoke("你好"))
    assert answer.content == "异步回答"


def test_stopping_leaves_no_threads_and_frees_the_port() -> None:
    before = threading.active_count()
    with ScriptedOpenAIServer([reply_text("一"), reply_text("二")]) as server:
        model = server.chat_model()
        model.invoke("1")
        model.invoke("2")  # keep-alive connection stays open in the pool
        port = server.port
    assert threading.active_count() == before
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("装机容量", 4), ("capacity", 2), ("500kW 装机", 2 + 2), ("IRR，8.5%", 1 + 1 + 1)],
)
def test_token_count_follows_the_documented_rule(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens
