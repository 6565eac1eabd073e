"""The framework end to end with scripted agents: plan, parallel fan-out, interrupt/resume, failure."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from fake_agents import BARRIER, RUNS, SPECS, TEMPLATES
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from graphs.context import Context
from graphs.main import build_graph


@pytest.fixture
def saver(data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


@pytest.fixture(autouse=True)
def _reset_runs():
    RUNS.clear()


def _run(graph, payload, thread="t1", user="u1"):
    config = {"configurable": {"thread_id": thread}}
    chunks = [
        c
        for mode, c in graph.stream(
            payload, config, context=Context(user_id=user), stream_mode=["custom", "updates"]
        )
        if mode == "custom"
    ]
    return graph.get_state(config), chunks


def test_interrupt_then_resume_runs_only_the_waiting_step(saver):
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    state, chunks = _run(graph, {"messages": [{"role": "user", "content": "查询城市然后汇总"}]})
    (intr,) = state.interrupts
    assert intr.value["question"] == "请告诉我项目所在的城市。"
    assert intr.value["missing"] == ["city"] and intr.value["seqNo"] == 0
    assert [s["status"] for s in state.values["plan"]["steps"]] == ["interrupted", "not_started"]
    question_chunk = [c for c in chunks if "agentChatResponse" in c]
    assert (
        question_chunk[0]["index"] == 0
        and question_chunk[0]["agentChatResponse"]["intent"] == "ask_city_question"
    )

    state, chunks = _run(graph, Command(resume="城市是杭州"))
    assert not state.interrupts
    plan = state.values["plan"]
    assert [s["status"] for s in plan["steps"]] == ["completed", "completed"]
    assert plan["steps"][1]["result"]["context"]["got"] == {0: {"city": "杭州"}}
    assert RUNS == {"ask_city": 2, "use_dep": 1}
    assert "2/2 个步骤完成" in state.values["summary"]
    progress = [c for c in chunks if c["index"] == 0 and "agentChatResponse" not in c]
    assert progress[0]["content"] == "正在查询杭州…"


def test_empty_resume_asks_again_without_touching_the_plan(saver):
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    _run(graph, {"messages": [{"role": "user", "content": "查询城市然后汇总"}]})
    state, _ = _run(graph, Command(resume="   "))
    (intr,) = state.interrupts
    assert intr.value["question"].startswith("没有收到有效的回答。")
    assert RUNS["ask_city"] == 1
    state, _ = _run(graph, Command(resume={"city": "上海"}))
    assert state.values["plan"]["steps"][1]["result"]["context"]["got"] == {0: {"city": "上海"}}


def test_answer_without_the_missing_value_asks_again(saver):
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    _run(graph, {"messages": [{"role": "user", "content": "查询城市然后汇总"}]})
    state, _ = _run(graph, Command(resume="不知道"))
    assert state.interrupts[0].value["missing"] == ["city"]
    assert state.values["plan"]["context"]["answers"] == {"0": ["不知道"]}


def test_independent_steps_run_in_parallel(saver):
    BARRIER["meet"] = threading.Barrier(3, timeout=10)
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    state, _ = _run(graph, {"messages": [{"role": "user", "content": "三个并行会合"}]})
    assert [s["status"] for s in state.values["plan"]["steps"]] == ["completed"] * 4
    assert RUNS["meet"] == 3


def test_failed_step_skips_dependents_and_is_reported(saver):
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    state, _ = _run(graph, {"messages": [{"role": "user", "content": "先出错再汇总"}]})
    steps = state.values["plan"]["steps"]
    assert [s["status"] for s in steps] == ["failed", "failed", "failed"]
    assert "RuntimeError: kaput" in steps[0]["result"]["output"]
    assert steps[2]["result"]["context"]["failedDependencies"] == [1]
    assert RUNS == {"boom": 1}
    assert "失败的步骤：0（boom）、1（use_dep）、2（use_dep）" in state.values["summary"]


def test_resume_in_a_new_process_on_the_same_sqlite_file(data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "checkpoints.sqlite"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        _run(
            build_graph(checkpointer=SqliteSaver(conn), specs=SPECS, templates=TEMPLATES),
            {"messages": [{"role": "user", "content": "查询城市然后汇总"}]},
        )
    with sqlite3.connect(path, check_same_thread=False) as conn:
        state, _ = _run(
            build_graph(checkpointer=SqliteSaver(conn), specs=SPECS, templates=TEMPLATES),
            Command(resume="城市是广州"),
        )
    assert [s["status"] for s in state.values["plan"]["steps"]] == ["completed", "completed"]
    assert RUNS == {"ask_city": 2, "use_dep": 1}


def test_empty_request_gets_a_chinese_hint_and_no_plan(saver):
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    state, _ = _run(graph, {"messages": [{"role": "user", "content": "  "}]})
    assert state.values.get("plan") is None
    assert "请告诉我您需要做什么" in state.values["summary"]


def test_step_the_user_already_has_is_dropped(saver):
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    _run(graph, {"messages": [{"role": "user", "content": "查询城市然后汇总"}]})
    _run(graph, Command(resume="城市是杭州"))
    state, _ = _run(graph, {"messages": [{"role": "user", "content": "已有城市信息，查询城市然后汇总"}]})
    assert [s["agentName"] for s in state.values["plan"]["steps"]] == ["use_dep"]
    assert state.values["plan"]["steps"][0]["dependsOn"] == []


def test_state_keeps_a_window_of_messages_and_memory_keeps_them_all(saver):
    from nodes.kit.step import memory_namespace
    from tests.support.services import graph_memory

    graph = build_graph(checkpointer=saver, specs=SPECS, templates=TEMPLATES)
    config = {"configurable": {"thread_id": "long"}}
    context = Context(user_id="u1", state_messages=6)
    for turn in range(6):
        payload = {"messages": [{"role": "user", "content": f"并行会合 第{turn}轮 marker{turn}"}]}
        graph.invoke(payload, config, context=context)
    messages = graph.get_state(config).values["messages"]
    assert len(messages) == 6 and "marker5" in messages[-2].content  # the newest 3 turns
    assert not any("marker0" in str(m.content) for m in messages)
    memory = graph_memory(context.data_path)
    kept = memory.messages(memory_namespace("planner", "u1", "long"))
    assert [t for t in range(6) if any(f"marker{t}" in str(m.content) for m in kept)] == list(range(6))
    assert "marker0" in memory.search(memory_namespace("planner", "u1", "long"), "marker0")[0].text


def test_eight_independent_steps_all_run_at_once_sync_via_the_runner_and_async(saver):
    """LangGraph alone would start 6 at a time on 2 cores (min(32, cores + 4) threads)."""
    import asyncio

    from fake_agents import template

    from plangraph.runner import PlanRunner

    eight = template("八方会合", "八个并行会合 eight parallel meetings", [("meet", [])] * 8)
    graph = build_graph(checkpointer=saver, specs=SPECS, templates=[eight])
    request = {"messages": [{"role": "user", "content": "八个并行会合"}]}

    BARRIER["meet"] = threading.Barrier(8, timeout=10)  # a step waiting for a thread breaks it
    outcome = PlanRunner(graph, Context(user_id="u1", conversation_id="sync8")).run("八个并行会合")
    assert [s["status"] for s in outcome.plan["steps"]] == ["completed"] * 8

    from langgraph.checkpoint.memory import InMemorySaver  # SqliteSaver has no async API

    BARRIER["meet"] = threading.Barrier(8, timeout=10)
    agraph = build_graph(checkpointer=InMemorySaver(), specs=SPECS, templates=[eight])
    config = {"configurable": {"thread_id": "async8"}}
    out = asyncio.run(agraph.ainvoke(request, config, context=Context(user_id="u1")))
    assert [s["status"] for s in out["plan"]["steps"]] == ["completed"] * 8
    assert RUNS["meet"] == 16
