"""Scenarios S1–S4 of the core issue through the embedding API, on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes.kit.services import BlockAgentMemory
from nodes.kit.step import memory_namespace
from plangraph.runner import PlanRunner
from tests.support.services import graph_memory, graph_plans, graph_results

S1 = "帮我生成一份光伏经济测算报告"
S1_ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
S2 = "我已经有测算方案了，对已有的测算方案进行敏感性分析，并生成测算报告"
S3 = "其他参数不变，将地址更换到上海市后重新进行测算"


@pytest.fixture(scope="module")
def conversation(tmp_path_factory):
    """One conversation that goes through S1 → S2 → S3 in order (module-scoped: the steps build on each other)."""
    data = tmp_path_factory.mktemp("scenarios")
    with PlanRunner.open(
        user_id="alice", conversation_id="pv-1", data_dir=str(data), checkpoint_url=""
    ) as runner:
        yield runner, data


def _agents(outcome):
    return [s["agentName"] for s in outcome.plan["steps"]]


def _pv_calls(data: Path) -> list:
    mem = BlockAgentMemory(graph_memory(data), memory_namespace("pv_calc", "alice", "pv-1"))
    return [m for m in mem.messages() if getattr(m, "tool_calls", None)]


def test_s1_report_plan_asks_then_completes_with_a_report_file(conversation):
    runner, data = conversation
    chunks: list[dict] = []
    first = runner.run(S1, on_chunk=chunks.append)
    assert _agents(first) == ["pv_calc", "sensitivity", "report"]
    assert first.interrupt is not None and first.interrupt["seqNo"] == 0
    assert set(first.interrupt["missing"]) >= {"capacity_kw"} or first.interrupt["missing"]
    assert "装机容量" in first.interrupt["question"]
    done = runner.resume(S1_ANSWER, on_chunk=chunks.append)
    assert done.interrupt is None
    assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
    assert any(p.endswith(".md") for p in done.artifacts) and any(p.endswith(".html") for p in done.artifacts)
    for path in done.artifacts:
        assert Path(path).is_file() and str(data) in path
    assert "IRR" in done.summary or "内部收益率" in done.summary
    assert [c["index"] for c in chunks if "agentChatResponse" in c] == [0, 0, 1, 2]
    assert len(_pv_calls(data)) == 1  # the interrupted first attempt computed nothing


def test_s2_existing_calculation_skips_pv_calc(conversation):
    runner, data = conversation
    outcome = runner.run(S2)
    assert _agents(outcome) == ["sensitivity", "report"]
    assert outcome.interrupt is None
    sens = outcome.plan["steps"][0]["result"]["context"]
    pv = graph_results(data, "alice", "pv-1").latest("pv_case")
    assert pv is not None
    assert sens["base"] == pv.ref  # the existing case, by reference
    assert sens["inputs"]["capacity_kw"] == pv.headline["inputs"]["capacity_kw"] == 500


def test_s3_change_address_recalls_every_other_parameter(conversation):
    runner, data = conversation
    before = _pv_calls(data)[-1].tool_calls[0]["args"]
    outcome = runner.run(S3)
    assert _agents(outcome) == ["pv_calc"]
    assert outcome.interrupt is None
    after = _pv_calls(data)[-1].tool_calls[0]["args"]
    assert "上海" in str(after.get("location") or after.get("city"))
    changed = {k for k in before if before[k] != after.get(k)}
    assert changed <= {"location", "city", "district", "province", "specific_yield", "feed_in_price"}, changed
    assert outcome.plan["steps"][0]["result"]["context"]["inputs"]["capacity_kw"] == 500


def test_s4_policy_question_is_answered_with_citations(conversation):
    runner, _ = conversation
    outcome = runner.run("分布式光伏余电上网电价怎么定？")
    assert _agents(outcome) == ["knowledge"]
    result = outcome.plan["steps"][0]["result"]
    assert "[1]" in result["output"]
    assert result["context"]["citations"][0]["n"] == 1


def test_an_answered_plan_is_no_longer_listed_as_waiting(data_dir):
    with PlanRunner.open(user_id="w", conversation_id="answered", data_dir=data_dir) as runner:
        first = runner.run(S1)
        plan_id = first.interrupt["planId"]
        store = graph_plans(data_dir)
        assert store.get(plan_id)["status"] == "interrupted"
        seen: list[str] = []

        def on_chunk(chunk: dict) -> None:
            if chunk["index"] == 0 and not seen:
                seen.append(store.get(plan_id)["status"])  # while the answered step runs again

        done = runner.resume(S1_ANSWER, on_chunk=on_chunk)
    assert seen == ["running"]
    assert store.get(plan_id)["status"] == "completed" and done.interrupt is None
