"""A service failing inside a step leaves the step to run again, not failed (issue 12 item 6).

Before: a full disk inside Chroma or SQLite, or a model endpoint refusing a request, raised inside
a sub-agent was taken for the agent's own bug: the step was checkpointed as failed, and after the
fault was gone `resume` finished the plan with failed steps and no report. Now such a fault ends the
turn with an error that names the service and says to resume; the checkpoint keeps the step to
run, and `resume()` once the fault is gone finishes the plan with its report. An agent's own error
still fails its step (tests/unit/core: the failing fake agent).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager

import pytest

from plangraph.runner import PlanRunner, ServiceUnavailableError, UserFacingError
from tests.reliability.races import ANSWERS, S1
from tests.support.openai_server import ScriptedOpenAIServer, fault_status, reply_text, reply_tool_call
from tools.plans.store import PlanStore


def _statuses(runner: PlanRunner) -> list[tuple[str, str]]:
    plan = runner.current_plan()
    assert plan is not None
    return [(s["agentName"], s["status"]) for s in plan["steps"]]


def _finished_with_a_report(runner: PlanRunner, plan_id: str, capacity: float) -> None:
    done = runner.resume()  # no answer: the answer given before the fault is kept
    assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
    pv = next(s for s in done.plan["steps"] if s["agentName"] == "pv_calc")
    assert pv["result"]["context"]["inputs"]["capacity_kw"] == capacity
    assert any(a.endswith("_report.md") for a in done.artifacts)
    store = PlanStore(runner.context.data_path / "plans.sqlite")
    assert store.get(plan_id)["status"] == "completed"


@contextmanager
def full_memory_database(runner: PlanRunner) -> Iterator[None]:
    """The block memory's SQLite file cannot grow (SQLITE_FULL, as on a full disk) until the block ends.

    `PRAGMA max_page_count` on the memory's own connection: real SQLite writes fail with the real
    "database or disk is full" error, and nothing else in the process is affected.
    """
    conn = runner.services.memory(runner.context)._store._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    try:
        yield
    finally:
        conn.execute("PRAGMA max_page_count = 1073741823")


@contextmanager
def chroma_disk_full(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every Chroma write raises chromadb's InternalError for a full disk (what its Rust core raises)."""
    from chromadb.api.models.Collection import Collection
    from chromadb.errors import InternalError

    calls: list[int] = []

    def full(self, *args, **kwargs):  # noqa: ANN001, ANN202, ARG001
        calls.append(1)
        raise InternalError("error returned from database: (code: 13) database or disk is full")

    with monkeypatch.context() as patch:
        patch.setattr(Collection, "upsert", full)
        patch.setattr(Collection, "add", full)
        yield calls


def test_full_memory_database_inside_a_step_is_resumable_and_resume_makes_the_report(data_dir):
    with PlanRunner.open(user_id="u", conversation_id="full-sqlite") as runner:
        asked = runner.run(S1).interrupt
        assert asked is not None
        with full_memory_database(runner):
            with pytest.raises(ServiceUnavailableError) as stopped:
                runner.resume(ANSWERS[500])
        message = str(stopped.value)
        assert "OperationalError: database or disk is full" in message
        assert "磁盘" in message and "plangraph resume --conversation full-sqlite" in message
        assert ("pv_calc", "failed") not in _statuses(runner)
        assert all(status != "failed" for _, status in _statuses(runner))
        assert runner.snapshot().next  # the checkpoint still has work to do
        _finished_with_a_report(runner, asked["planId"], 500)


def test_chroma_disk_full_inside_a_step_is_resumable_and_resume_makes_the_report(data_dir, monkeypatch):
    with PlanRunner.open(user_id="u", conversation_id="full-chroma") as runner:
        asked = runner.run(S1).interrupt
        assert asked is not None
        with chroma_disk_full(monkeypatch) as calls:
            with pytest.raises(ServiceUnavailableError, match="InternalError: .*database or disk is full"):
                runner.resume(ANSWERS[800])
        assert calls  # the fault was met
        assert all(status != "failed" for _, status in _statuses(runner)), _statuses(runner)
        _finished_with_a_report(runner, asked["planId"], 800)


KNOWLEDGE_PLAN = {
    "steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答余电上网电价政策", "dependsOn": []}]
}


def test_model_refusing_a_step_call_is_resumable_not_a_failed_step(model_env, data_dir):
    """The planner's call works, the knowledge step's call gets 401: not the agent's fault."""
    script = [reply_tool_call("create_plan", KNOWLEDGE_PLAN), fault_status(401)]  # 4xx: not retried
    with ScriptedOpenAIServer(script, responder=lambda body: reply_text("按燃煤基准价结算[1]。")) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="step-401") as runner:
            with pytest.raises(UserFacingError, match=r"模型服务拒绝了密钥.*HTTP 401.*resume"):
                runner.run("分布式光伏余电上网电价怎么定？")
            assert _statuses(runner) == [("knowledge", "in_progress")]
            done = runner.resume()  # the key is fixed (here: the endpoint answers again)
    assert done.plan["steps"][0]["status"] == "completed"
    assert "步骤执行出错" not in done.summary


def test_an_agents_own_error_still_fails_its_step(data_dir, monkeypatch):
    """The line the change draws: a bug in the agent is a failed step, reported, not a resumable stop."""
    import nodes.agents.pv_calc as pv_calc

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise ZeroDivisionError("a bug in the agent")

    with PlanRunner.open(user_id="u", conversation_id="own-bug") as runner:
        asked = runner.run(S1).interrupt
        assert asked is not None
        monkeypatch.setattr(pv_calc, "make_case", broken)
        done = runner.resume(ANSWERS[500])
    assert done.interrupt is None
    assert done.plan["steps"][0]["status"] == "failed"
    assert "ZeroDivisionError" in done.plan["steps"][0]["result"]["output"]


def _real_sqlite_error(tmp_path, kind: str) -> sqlite3.OperationalError:
    """The error SQLite raises for a database locked by another connection, or opened read-only."""
    db = tmp_path / f"{kind}.sqlite"
    with closing(sqlite3.connect(db)) as setup:
        setup.execute("CREATE TABLE t(x)")
        setup.commit()
    holder = sqlite3.connect(db, isolation_level=None)
    if kind == "locked":
        holder.execute("BEGIN EXCLUSIVE")
        writer = sqlite3.connect(db, timeout=0)
    else:
        writer = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        writer.execute("INSERT INTO t VALUES (1)")
    except sqlite3.OperationalError as error:
        return error
    finally:
        writer.close()
        holder.close()
    raise AssertionError(f"no error from a {kind} database")


def test_sqlite_programming_errors_are_not_service_faults(tmp_path):
    from tools.faults import is_service_fault, storage_fault_kind

    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError) as syntax:
        conn.execute("SELEC 1")
    with pytest.raises(sqlite3.OperationalError) as no_table:
        conn.execute("SELECT * FROM missing")
    assert not is_service_fault(syntax.value) and not is_service_fault(no_table.value)
    conn.execute("CREATE TABLE t(x)")
    conn.execute("PRAGMA max_page_count = 2")
    with pytest.raises(sqlite3.OperationalError) as full:
        conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    assert storage_fault_kind(full.value) == "full" and is_service_fault(full.value)
    assert storage_fault_kind(_real_sqlite_error(tmp_path, "locked")) == "busy"
    assert storage_fault_kind(_real_sqlite_error(tmp_path, "read-only")) == "storage"
    assert storage_fault_kind(OSError(28, "No space left on device")) == "full"
    assert storage_fault_kind(OSError(30, "Read-only file system")) == "storage"
    assert storage_fault_kind(FileNotFoundError(2, "No such file")) is None  # a path we got wrong
