"""The plan store never claims more than the checkpoint holds (issue 12 item 5).

Before: ask_user marked the plan "running" in the plan store as soon as the answer arrived; when
the checkpoint write after it failed (lock, read-only database, full disk), the thread still waited
for the answer but the plan had vanished from `plangraph pending`, GET /pending and `remind`.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from graphs.context import Context
from graphs.main import build_graph
from plangraph.runner import PlanRunner, ServiceUnavailableError
from plangraph.waiting import waiting_plans
from tests.reliability.races import ANSWERS, S1
from tools.plans.store import PlanStore


class FailingSaver(SqliteSaver):
    """A real SqliteSaver whose writes fail while `full` is set, as on a full disk."""

    full = False

    def _check(self) -> None:
        if self.full:
            raise sqlite3.OperationalError("database or disk is full")

    def put(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return super().put(*args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        super().put_writes(*args, **kwargs)


def test_failed_checkpoint_write_after_an_answer_keeps_the_plan_listed_as_waiting(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANGRAPH_EMBEDDINGS", "hash")
    monkeypatch.delenv("PLANGRAPH_MODEL", raising=False)
    context = Context(user_id="w", conversation_id="full-disk", data_dir=str(tmp_path / "data"))
    conn = sqlite3.connect(context.data_path / "checkpoints.sqlite", check_same_thread=False)
    saver = FailingSaver(conn)
    saver.setup()
    runner = PlanRunner(build_graph(checkpointer=saver), context)
    asked = runner.run(S1).interrupt
    assert asked is not None
    store = PlanStore(context.data_path / "plans.sqlite")

    saver.full = True
    with pytest.raises(ServiceUnavailableError, match="plangraph resume"):
        runner.resume(ANSWERS[500])
    saver.full = False

    state = runner.graph.get_state(runner.config)
    assert state.interrupts  # the checkpoint still waits for the answer …
    record = store.get(asked["planId"])
    assert record is not None and record["status"] == "interrupted"  # … and so does the plan store
    assert [p.plan_id for p in waiting_plans(store, user_id="w")] == [asked["planId"]]

    done = runner.resume(ANSWERS[500])  # the answer can be given again
    assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
    assert store.get(asked["planId"])["status"] == "completed"
    conn.close()
