"""SIGKILL scenario S1 at every step boundary and inside every step; restart and resume.

After recovery the plan must equal an uninterrupted run's (statuses, outputs, numbers — not ids),
no step that the checkpoint had as completed runs again, and there is exactly one report file.
One representative kill point runs by default; the whole matrix is `make soak`.
"""

from __future__ import annotations

import pytest

from plangraph.runner import PlanRunner
from tests.integration.scenarios.test_scenarios import S1, S1_ANSWER
from tests.reliability.s1_kill import (
    ALL_KILL_POINTS,
    CONVERSATION,
    first_difference,
    kill_then_recover,
    normalise_plan,
)

# S5 (tests/integration/scenarios) already kills inside sensitivity; by default we kill after the
# report agent wrote its files but before its checkpoint, the case most likely to duplicate files.
DEFAULT_POINTS = ["report:end"]


def _open(data):
    return PlanRunner.open(user_id="bob", conversation_id=CONVERSATION, data_dir=str(data), checkpoint_url="")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The final plan of an uninterrupted S1 run (same user and conversation ids)."""
    data = tmp_path_factory.mktemp("reference") / "data"
    mp = pytest.MonkeyPatch()
    mp.setenv("PLANGRAPH_EMBEDDINGS", "hash")
    mp.delenv("PLANGRAPH_MODEL", raising=False)
    try:
        with _open(data) as runner:
            assert runner.run(S1).interrupt is not None
            done = runner.resume(S1_ANSWER)
    finally:
        mp.undo()
    return normalise_plan(done.plan, data)


def check_kill_and_recovery(kill_at: str, data, reference, settle: float = 0.0) -> dict:
    """Kill at `kill_at`, note what the checkpoint kept, recover, and check the outcome."""
    committed: dict = {}

    def snapshot() -> None:
        with _open(data) as runner:
            committed["plan"] = runner.current_plan()

    outcome = kill_then_recover(data, kill_at, settle, on_killed=snapshot)
    plan = committed.get("plan")
    done_before = (
        {(s["agentName"], s["seqNo"]) for s in plan["steps"] if s["status"] == "completed"} if plan else set()
    )
    rerun = {(r["agent"], r["seqNo"]) for r in outcome["after_kill"]} & done_before
    assert not rerun, f"{kill_at}: steps the checkpoint had as completed ran again: {rerun}"
    final = outcome["final"]
    assert final is not None, (
        f"{kill_at}: no final plan after resuming (exit codes {outcome['codes']})\n{outcome['stderr']}"
    )
    assert [s["status"] for s in final["plan"]["steps"]] == ["completed"] * 3
    diff = first_difference(normalise_plan(final["plan"], data), reference)
    assert diff is None, f"{kill_at}: recovered plan differs from an uninterrupted run at {diff}"
    for pattern in ("*_report.md", "*_report.html"):
        files = sorted((data / "artifacts").rglob(pattern))
        assert len(files) == 1, files
    return outcome


@pytest.mark.parametrize("kill_at", DEFAULT_POINTS)
def test_sigkill_then_resume_matches_an_uninterrupted_run(kill_at, tmp_path, reference):
    outcome = check_kill_and_recovery(kill_at, tmp_path / "data", reference)
    assert outcome["before_kill"], "the killed process ran no step"


@pytest.mark.soak
@pytest.mark.parametrize("kill_at", [p for p in ALL_KILL_POINTS if p not in DEFAULT_POINTS])
def test_sigkill_matrix(kill_at, tmp_path, reference):
    check_kill_and_recovery(kill_at, tmp_path / "data", reference)
