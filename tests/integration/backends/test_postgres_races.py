"""One turn per conversation across processes with PostgreSQL checkpoints (advisory locks).

The same races as tests/reliability/test_turn_races.py (two CLI processes, two `plangraph serve`
processes on one data dir), with PLANGRAPH_CHECKPOINT_URL pointing at a real PostgreSQL server.
"""

from __future__ import annotations

import psycopg
import pytest

from plangraph.auth import thread_id_for
from plangraph.errors import ConversationBusyError
from plangraph.turn_lock import TurnLocks
from tests.reliability.races import (
    ANSWERS,
    S1,
    USER,
    assert_stores_agree,
    capacity_of,
    clear_runs,
    cli,
    cli_env,
    invoke,
    race_cli,
    race_http,
    runs,
    two_servers,
)
from tests.reliability.test_turn_races import check_resume_race, check_run_resume_race

pytestmark = pytest.mark.slow


def test_advisory_lock_refuses_a_second_holder_and_is_freed_with_the_session(pg_url, tmp_path):
    locks = TurnLocks(tmp_path, postgres_url=pg_url)
    with locks.hold("u/c1", "c1"):
        with pytest.raises(ConversationBusyError, match="正在执行另一轮请求"):
            with TurnLocks(tmp_path / "elsewhere", postgres_url=pg_url).hold("u/c1", "c1"):
                pass  # another data dir, same database: still the same conversation
        with locks.hold("u/c2", "c2"):  # another conversation is free
            pass
        with psycopg.connect(pg_url) as conn:
            held = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()
        assert held is not None and held[0] == 1
    with locks.hold("u/c1", "c1"):  # released
        pass


def test_two_cli_processes_racing_on_postgres(pg_url, tmp_path):
    data = tmp_path / "data"
    env = cli_env(data, tmp_path, checkpoint_url=pg_url)
    for attempt in range(2):
        conversation = f"pg-race-{attempt}"
        assert cli("run", S1, "--conversation", conversation, env=env).returncode == 3
        clear_runs(tmp_path)
        codes = race_cli(
            ["resume", "--conversation", conversation, ANSWERS[500]],
            ["resume", "--conversation", conversation, ANSWERS[800]],
            env,
            tmp_path / "barrier",
        )
        check_resume_race(codes, data, tmp_path, conversation, pg_url)
    assert cli("run", S1, "--conversation", "pg-rr", env=env).returncode == 3
    codes = race_cli(
        ["run", "帮我做一份光伏经济测算报告，地点上海", "--conversation", "pg-rr"],
        ["resume", "--conversation", "pg-rr", ANSWERS[500]],
        env,
        tmp_path / "barrier",
    )
    check_run_resume_race(codes, data, "pg-rr", pg_url)


def test_two_server_processes_racing_on_postgres(pg_url, tmp_path):
    data = tmp_path / "data"
    env = cli_env(data, tmp_path, checkpoint_url=pg_url)
    with two_servers(env) as (a, b):
        for attempt in range(2):
            conversation = f"pg-http-{attempt}"
            first = invoke(a, conversation, {"messages": [{"role": "user", "content": S1}]})
            assert "__interrupt__" in first.json()["output"], first.text
            clear_runs(tmp_path)
            answers = race_http(
                [(a, conversation, {"resume": ANSWERS[500]}), (b, conversation, {"resume": ANSWERS[800]})]
            )
            assert sorted(r.status_code for r in answers) == [200, 409], [r.text for r in answers]
            [won] = [r.json()["output"] for r in answers if r.status_code == 200]
            assert runs(tmp_path) == {"pv_calc": 1, "sensitivity": 1, "report": 1}
            plan = assert_stores_agree(data, conversation, pg_url, http=True)
            assert capacity_of(plan) == capacity_of(won["plan"])
            with psycopg.connect(pg_url) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM checkpoints WHERE thread_id = %s",
                    (thread_id_for(USER, conversation),),
                ).fetchone()
            assert row is not None and row[0] > 0  # the checkpoints are in PostgreSQL
