"""PlanRunner's async twin: arun / aresume on AsyncSqliteSaver, in one event loop with other work."""

from __future__ import annotations

import asyncio

import pytest

from plangraph.errors import ConversationStateError
from plangraph.runner import PlanRunner

ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"


def test_arun_asks_aresume_finishes_and_the_loop_stays_free(data_dir):
    ticks = 0
    chunks: list[dict] = []

    async def ticker(stop: asyncio.Event) -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    async def on_chunk(chunk: dict) -> None:  # a coroutine callback is awaited
        chunks.append(chunk)

    async def scenario():
        stop = asyncio.Event()
        clock = asyncio.create_task(ticker(stop))
        async with PlanRunner.aopen(user_id="alice", conversation_id="a1", data_dir=str(data_dir)) as runner:
            first = await runner.arun("帮我生成一份光伏经济测算报告", on_chunk=on_chunk)
            with pytest.raises(ConversationStateError):
                await runner.aresume(None)  # a question waits: an answer is needed
            done = await runner.aresume(ANSWER, on_chunk=chunks.append)  # a plain callback works too
        stop.set()
        await clock
        return first, done

    first, done = asyncio.run(scenario())
    assert first.interrupt is not None and "项目地点" in first.interrupt["question"]
    assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
    assert any(p.endswith("_report.html") for p in done.artifacts)
    assert [c["index"] for c in chunks if "agentChatResponse" in c] == [0, 0, 1, 2]
    assert ticks > 10  # other tasks ran while the graph did

    # The sync runner reads the same file: the async run's checkpoints are the conversation's.
    with PlanRunner.open(user_id="alice", conversation_id="a1", data_dir=str(data_dir)) as runner:
        assert runner.current_plan()["planId"] == done.plan["planId"]
