"""The HTTP API over a real uvicorn server: S1 interrupt → resume, streaming, RemoteRunnable, REST."""

from __future__ import annotations

import gc
import weakref

import httpx
import pytest

from tests.integration.http.http_support import KEY_BOB, human, sse
from tests.integration.scenarios.test_scenarios import S1, S1_ANSWER


def _properties(schema: dict) -> dict:
    """Top-level properties of a JSON schema whose root may be a $ref into $defs."""
    if "$ref" in schema:
        schema = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema["properties"]


def _steps(plan: dict) -> list[tuple[str, str]]:
    return [(s["agentName"], s["status"]) for s in plan["steps"]]


def test_s1_invoke_interrupts_then_resume_completes_the_plan(live):
    with live.client() as alice:
        first = alice.post(
            "/plangraph/invoke", json={"input": human(S1), "config": {"configurable": {"thread_id": "s1-a"}}}
        )
        assert first.status_code == 200, first.text
        out = first.json()["output"]
        assert out["conversationId"] == "s1-a"
        (waiting,) = out["__interrupt__"]
        assert "装机容量" in waiting["value"]["question"] and waiting["value"]["seqNo"] == 0
        plan_id = out["plan"]["planId"]

        pending = alice.get("/pending").json()["plans"]
        assert [(p["planId"], p["status"], p["conversationId"]) for p in pending] == [
            (plan_id, "interrupted", "s1-a")
        ]
        assert "装机容量" in pending[0]["question"]

        done = alice.post(
            "/plangraph/invoke", json={"input": {"resume": S1_ANSWER}}, headers={"X-Conversation-Id": "s1-a"}
        )
        assert done.status_code == 200, done.text
        out = done.json()["output"]
        assert "__interrupt__" not in out
        assert out["plan"]["planId"] == plan_id
        assert _steps(out["plan"]) == [
            ("pv_calc", "completed"),
            ("sensitivity", "completed"),
            ("report", "completed"),
        ]
        assert out["plan"]["steps"][0]["result"]["context"]["inputs"]["capacity_kw"] == 500
        assert "IRR" in out["summary"] or "内部收益率" in out["summary"]

        record = alice.get(f"/plans/{plan_id}").json()
        assert record["status"] == "completed" and record["userId"] == "alice"
        assert alice.get("/pending").json()["plans"] == []

        report = next(url for url in out["artifacts"] if url.endswith(".md"))
        got = alice.get(report)
        assert got.status_code == 200 and "500" in got.text
    with live.client(KEY_BOB) as bob:
        assert bob.get(report).status_code == 404
        assert bob.get(f"/plans/{plan_id}").status_code == 404


def test_stream_yields_design_chunks_in_order_then_the_result(live):
    with live.client() as alice:
        body = {"input": human(S1), "config": {"configurable": {"thread_id": "s1-stream"}}}
        with alice.stream("POST", "/plangraph/stream", json=body) as response:
            assert response.status_code == 200
            first = sse(response)
        with alice.stream(
            "POST",
            "/plangraph/stream",
            json={"input": {"resume": S1_ANSWER}},
            headers={"X-Conversation-Id": "s1-stream"},
        ) as response:
            second = sse(response)
    for events in (first, second):
        assert [e for e, _ in events][0] == "metadata" and events[-1][0] == "end"
        assert all(e in ("metadata", "data", "end") for e, _ in events), events
    data = [d for e, d in first + second if e == "data"]
    chunks = [d for d in data if "index" in d]
    results = [d for d in data if "plan" in d]
    assert len(results) == 2 and data.index(results[0]) > data.index(chunks[0])
    assert "__interrupt__" in results[0] and "__interrupt__" not in results[1]
    assert [c["index"] for c in chunks if "agentChatResponse" in c] == [0, 0, 1, 2]
    step_indices = [c["index"] for c in chunks if c["index"] >= 0]
    assert step_indices == sorted(step_indices)
    assert _steps(results[1]["plan"])[-1] == ("report", "completed")


def test_remote_runnable_invoke_resume_and_stream(live):
    from langserve import RemoteRunnable

    remote = RemoteRunnable(f"{live.url}/plangraph/", headers={"X-API-Key": KEY_BOB}, timeout=120)
    config = {"configurable": {"thread_id": "remote-1"}}
    first = remote.invoke(human(S1), config=config)
    assert first["conversationId"] == "remote-1" and first["__interrupt__"][0]["value"]["seqNo"] == 0
    chunks = list(remote.stream({"resume": S1_ANSWER}, config=config))
    assert [c["index"] for c in chunks if "agentChatResponse" in c] == [0, 1, 2]
    assert _steps(chunks[-1]["plan"]) == [
        ("pv_calc", "completed"),
        ("sensitivity", "completed"),
        ("report", "completed"),
    ]
    with pytest.raises(httpx.HTTPStatusError) as caught:
        remote.invoke({"resume": S1_ANSWER}, config=config)
    assert caught.value.response.status_code == 409 and "没有等待回答的问题" in caught.value.response.text
    # langserve closes a RemoteRunnable's clients in a weakref finalizer that, inside a running
    # event loop, submits to a new thread pool. Collected later inside the server's thread while
    # ThreadPoolExecutor.submit holds its global lock there, it deadlocks the server (seen in the
    # full suite): finalize it here, in the test's own thread.
    gone = weakref.ref(remote)
    del remote, caught
    gc.collect()
    assert gone() is None


def test_batch_starts_one_conversation_per_input(live):
    with live.client() as alice:
        response = alice.post("/plangraph/batch", json={"inputs": [human(S1), human(S1)]})
    assert response.status_code == 200, response.text
    outputs = response.json()["output"]
    assert len({o["conversationId"] for o in outputs}) == 2
    assert all(o["__interrupt__"][0]["value"]["seqNo"] == 0 for o in outputs)


def test_stream_events_reports_the_turn(live):
    body = {"input": human(S1), "config": {"configurable": {"thread_id": "events-1"}}, "version": "v2"}
    with live.client() as alice, alice.stream("POST", "/plangraph/stream_events", json=body) as response:
        assert response.status_code == 200
        events = [d for e, d in sse(response) if e == "data"]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "on_chain_start" and kinds[-1] == "on_chain_end"
    streamed = [e["data"]["chunk"] for e in events if e["event"] == "on_chain_stream"]
    assert any(c.get("index") == 0 for c in streamed)
    assert "__interrupt__" in events[-1]["data"]["output"]


def test_schemas_describe_messages_resume_and_interrupt(live):
    with live.client() as alice:
        given = alice.get("/plangraph/input_schema").json()
        returned = alice.get("/plangraph/output_schema").json()
        config = alice.get("/plangraph/config_schema").json()
    assert {"messages", "resume"} <= set(_properties(given))
    assert {"__interrupt__", "plan", "conversationId"} <= set(_properties(returned))
    assert "thread_id" in str(config)


def test_bad_input_is_a_clear_client_error(live):
    with live.client() as alice:
        both = alice.post("/plangraph/invoke", json={"input": {**human(S1), "resume": "x"}})
        empty = alice.post("/plangraph/invoke", json={"input": human("   ")})
        no_thread = alice.post("/plangraph/invoke", json={"input": {"resume": "x"}})
        bad_id = alice.post(
            "/plangraph/invoke", json={"input": human(S1)}, headers={"X-Conversation-Id": "a b/../c"}
        )
        unknown = alice.post(
            "/plangraph/invoke", json={"input": {"resume": "x"}}, headers={"X-Conversation-Id": "nope"}
        )
        not_a_message = alice.post("/plangraph/invoke", json={"input": {"messages": ["hi"]}})
        chat_style = alice.post(
            "/plangraph/invoke",
            json={"input": {"messages": [{"role": "user", "content": S1}]}},
            headers={"X-Conversation-Id": "chat-style"},
        )
    assert not_a_message.status_code == 422 and "Traceback" not in not_a_message.text
    assert chat_style.status_code == 200 and chat_style.json()["output"]["__interrupt__"]
    assert both.status_code == 422 and "二者之一" in both.json()["detail"]
    assert empty.status_code == 422
    assert no_thread.status_code == 409 and "会话 ID" in no_thread.json()["detail"]
    assert bad_id.status_code == 422
    assert unknown.status_code == 404 and "找不到会话" in unknown.json()["detail"]


def test_healthz_needs_no_key(live):
    with live.client(key=None) as anyone:
        assert anyone.get("/healthz").json() == {"status": "ok"}
