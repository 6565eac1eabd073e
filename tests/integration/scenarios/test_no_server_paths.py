"""The graph itself (as Studio / `langgraph dev` runs it) never puts the server's paths in state or stream.

Artifacts are named relative to the data dir in state, and by file name in text; the CLI resolves
them to full local paths for the person on the machine.
"""

from __future__ import annotations

import json

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs.context import Context
from graphs.main import build_graph
from plangraph.runner import PlanRunner


def _stream(graph, payload, config) -> list:
    return list(
        graph.stream(payload, config, context=Context(user_id="u1"), stream_mode=["custom", "values"])
    )


def test_s1_state_and_stream_name_artifacts_without_the_data_dir(data_dir):
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "s1"}}
    events = _stream(
        graph, {"messages": [{"role": "user", "content": "帮我生成一份光伏经济测算报告"}]}, config
    )
    assert graph.get_state(config).interrupts
    events += _stream(graph, Command(resume="地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"), config)
    state = graph.get_state(config)
    assert not state.interrupts
    wire = json.dumps([*events, state.values], ensure_ascii=False, default=str)
    assert str(data_dir.resolve()) not in wire and str(data_dir) not in wire

    plan = state.values["plan"]
    report = next(s for s in plan["steps"] if s["agentName"] == "report")
    artifacts = report["result"]["context"]["artifacts"]
    assert artifacts and all(a.startswith("artifacts/u1/s1/") for a in artifacts)
    assert all((data_dir / a).is_file() for a in artifacts)
    names = [a.rsplit("/", 1)[-1] for a in artifacts]
    assert all(name in report["result"]["output"] for name in names[:2])  # Markdown, HTML
    assert all(name in state.values["summary"] for name in names)


def test_the_cli_still_shows_full_local_paths(data_dir):
    with PlanRunner.open(user_id="u1", conversation_id="s1") as runner:
        runner.run("帮我生成一份光伏经济测算报告")
        outcome = runner.resume("地点是杭州余杭区，进行工商业光伏测算，装机容量500kW")
    assert outcome.artifacts
    for path in outcome.artifacts:
        assert path.startswith(str(data_dir.resolve())) and path.endswith((".md", ".html", ".png"))
