"""The graph under `langgraph dev` (what Studio talks to), driven over HTTP by `langgraph_sdk`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from langgraph_sdk import get_client

from tools.plans.store import PlanStore

REPO = Path(__file__).resolve().parents[3]
S1 = "帮我生成一份光伏经济测算报告"
S1_ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
CONTEXT = {"user_id": "alice", "conversation_id": "studio-1"}


def test_langgraph_json_exports_the_uncheckpointed_graph():
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    assert config["graphs"] == {"plangraph": "./graphs/main.py:graph"}
    assert config["env"] == ".env"
    from graphs.main import graph

    assert graph.checkpointer is None  # the server brings its own


def test_assistant_schemas_have_input_and_context(dev_server):
    async def schemas() -> dict:
        async with get_client(url=dev_server.url) as client:
            [assistant] = await client.assistants.search(graph_id="plangraph")
            return await client.assistants.get_schemas(assistant["assistant_id"])

    got = asyncio.run(schemas())
    assert got["input_schema"] is not None and "messages" in got["input_schema"]["properties"]
    context = got["context_schema"]
    assert context is not None
    assert {"user_id", "conversation_id", "model", "data_dir"} <= set(context["properties"])
    assert all(field.get("description") for field in context["properties"].values())


def test_s1_interrupts_then_resume_command_completes_the_plan(dev_server):
    async def custom_chunks(client, tid: str, **run) -> list[dict]:
        stream = client.runs.stream(tid, "plangraph", context=CONTEXT, stream_mode="custom", **run)
        return [part.data async for part in stream if part.event == "custom"]

    async def scenario() -> tuple[list, dict, dict, list, dict, dict]:
        async with get_client(url=dev_server.url) as client:
            tid = (await client.threads.create())["thread_id"]
            first = await custom_chunks(client, tid, input={"messages": [{"role": "user", "content": S1}]})
            waiting, waiting_thread = await client.threads.get_state(tid), await client.threads.get(tid)
            second = await custom_chunks(client, tid, command={"resume": S1_ANSWER})
            done, done_thread = await client.threads.get_state(tid), await client.threads.get(tid)
        return first, waiting, waiting_thread, second, done, done_thread

    first, waiting, waiting_thread, second, done, done_thread = asyncio.run(scenario())

    # The first run stops on the DESIGN interrupt payload of step 0.
    assert waiting_thread["status"] == "interrupted"
    assert waiting["next"] == ["ask_user"]
    [interrupt] = waiting["interrupts"]
    payload = interrupt["value"]
    assert payload["seqNo"] == 0 and payload["planId"] == waiting["values"]["plan"]["planId"]
    assert "装机容量" in payload["question"] and "capacity_kw" in payload["missing"]
    assert [s["agentName"] for s in waiting["values"]["plan"]["steps"]] == [
        "pv_calc",
        "sensitivity",
        "report",
    ]

    # custom stream mode carries the DESIGN chunks: {"index", "content", "agentChatResponse"?}.
    for chunk in first + second:
        assert set(chunk) <= {"index", "content", "agentChatResponse"} and isinstance(chunk["index"], int)
        assert isinstance(chunk["content"], str) and chunk["content"]
    assert first[0]["index"] == -1  # the planner speaks first
    asked = [c for c in first if "agentChatResponse" in c]
    assert [c["index"] for c in asked] == [0]
    assert asked[0]["agentChatResponse"]["intent"] and "装机容量" in asked[0]["agentChatResponse"]["content"]

    # Command(resume=...) finishes the plan; only the interrupted step and its dependents run.
    assert done_thread["status"] == "idle" and not done["interrupts"] and done["next"] == []
    plan = done["values"]["plan"]
    assert plan["planId"] == payload["planId"]
    assert [s["status"] for s in plan["steps"]] == ["completed"] * 3
    assert [c["index"] for c in second if "agentChatResponse" in c] == [0, 1, 2]
    assert "IRR" in done["values"]["summary"] or "内部收益率" in done["values"]["summary"]

    # The run context reached the nodes: the plan is stored for alice's conversation in the data dir.
    [record] = PlanStore(dev_server.data_dir / "plans.sqlite").list(user_id="alice")
    assert record["conversationId"] == "studio-1" and record["status"] == "completed"
    assert {".md", ".html"} <= {p.suffix for p in (dev_server.data_dir / "artifacts").rglob("*")}
