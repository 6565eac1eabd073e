"""One turn per conversation across processes (SQLite checkpoints on one shared data dir).

Before the cross-process lock, two `plangraph serve` processes on one data dir both accepted two
different answers to one question (200 and 200), ran pv_calc and report twice, and the checkpoint
kept one answer while the plan store and the report file held the other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.races import (
    ANSWERS,
    BUSY,
    S1,
    assert_stores_agree,
    capacity_of,
    clear_runs,
    cli,
    cli_env,
    events,
    invoke,
    race_cli,
    race_http,
    runs,
    two_servers,
)

pytestmark = pytest.mark.slow


def check_resume_race(codes: list, data: Path, tmp: Path, conversation: str, url: str = "") -> None:
    """Resume/resume: one answer wins (exit 0), the other is refused (exit 2); stores agree."""
    assert sorted(c[0] for c in codes) == [0, 2], codes
    (winner_out, loser_out) = (codes[0][1], codes[1][1]) if codes[0][0] == 0 else (codes[1][1], codes[0][1])
    [error] = [e for e in events(loser_out) if e["event"] == "error"]
    assert BUSY in error["message"] or "没有等待回答的问题" in error["message"], error
    final = events(winner_out)[-1]
    assert final["event"] == "final" and [s["status"] for s in final["plan"]["steps"]] == ["completed"] * 3
    assert runs(tmp) == {"pv_calc": 1, "sensitivity": 1, "report": 1}  # nothing ran twice
    won = capacity_of(final["plan"])
    plan = assert_stores_agree(data, conversation, url)
    assert capacity_of(plan) == won
    [report] = [p for p in final["artifacts"] if p.endswith("_report.md")]
    assert f"{won:g} kW" in Path(report).read_text(encoding="utf-8")


def check_run_resume_race(codes: list, data: Path, conversation: str, url: str = "") -> None:
    """Run/resume on a waiting conversation: exactly one of them ran; stores agree."""
    run_code, resume_code = codes[0][0], codes[1][0]
    assert sorted([run_code, resume_code]) in ([0, 2], [2, 3]), codes  # resume won (0) or run asked (3)
    loser = codes[1] if run_code == 3 else codes[0]
    [error] = [e for e in events(loser[1]) if e["event"] == "error"]
    assert BUSY in error["message"], error
    plan = assert_stores_agree(data, conversation, url)
    if resume_code == 0:
        assert [s["status"] for s in plan["steps"]] == ["completed"] * 3
    else:
        assert any(s["status"] == "interrupted" for s in plan["steps"])


@pytest.mark.parametrize("attempt", [1, 2])
def test_two_cli_processes_racing_two_answers_one_wins(tmp_path, attempt):
    data = tmp_path / "data"
    env = cli_env(data, tmp_path, checkpoint_url="")
    conversation = f"race-cli-{attempt}"
    assert cli("run", S1, "--conversation", conversation, env=env).returncode == 3
    clear_runs(tmp_path)
    codes = race_cli(
        ["resume", "--conversation", conversation, ANSWERS[500]],
        ["resume", "--conversation", conversation, ANSWERS[800]],
        env,
        tmp_path / "barrier",
    )
    check_resume_race(codes, data, tmp_path, conversation)
    assert all("Traceback" not in err for _, _, err in codes)


def test_two_cli_processes_racing_run_and_resume_one_wins(tmp_path):
    data = tmp_path / "data"
    env = cli_env(data, tmp_path, checkpoint_url="")
    assert cli("run", S1, "--conversation", "race-rr", env=env).returncode == 3
    codes = race_cli(
        ["run", "帮我做一份光伏经济测算报告，地点上海", "--conversation", "race-rr"],
        ["resume", "--conversation", "race-rr", ANSWERS[500]],
        env,
        tmp_path / "barrier",
    )
    check_run_resume_race(codes, data, "race-rr")


def test_two_server_processes_racing_answers_and_requests(tmp_path):
    data = tmp_path / "data"
    env = cli_env(data, tmp_path, checkpoint_url="")
    with two_servers(env) as (a, b):
        for attempt in range(3):  # repeated: one race could win by luck
            conversation = f"race-http-{attempt}"
            first = invoke(a, conversation, {"messages": [{"role": "user", "content": S1}]})
            assert first.status_code == 200 and "__interrupt__" in first.json()["output"], first.text
            clear_runs(tmp_path)
            answers = race_http(
                [(a, conversation, {"resume": ANSWERS[500]}), (b, conversation, {"resume": ANSWERS[800]})]
            )
            assert sorted(r.status_code for r in answers) == [200, 409], [r.text for r in answers]
            [won] = [r.json()["output"] for r in answers if r.status_code == 200]
            [lost] = [r.json() for r in answers if r.status_code == 409]
            assert BUSY in lost["detail"] or "没有等待回答的问题" in lost["detail"]
            assert runs(tmp_path) == {"pv_calc": 1, "sensitivity": 1, "report": 1}
            plan = assert_stores_agree(data, conversation, "", http=True)
            assert capacity_of(plan) == capacity_of(won["plan"])

        # A new request racing an answer on a waiting conversation: one of them runs.
        conversation = "race-http-rr"
        asked = invoke(a, conversation, {"messages": [{"role": "user", "content": S1}]})
        assert "__interrupt__" in asked.json()["output"]
        answers = race_http(
            [
                (a, conversation, {"messages": [{"role": "user", "content": "光伏经济测算报告，地点上海"}]}),
                (b, conversation, {"resume": ANSWERS[500]}),
            ]
        )
        assert sorted(r.status_code for r in answers) == [200, 409], [r.text for r in answers]
        assert_stores_agree(data, conversation, "", http=True)


def test_file_lock_refuses_a_second_turn_even_in_the_same_process(tmp_path):
    from plangraph.errors import ConversationBusyError
    from plangraph.turn_lock import TurnLocks

    locks = TurnLocks(tmp_path)
    with locks.hold("u/c1", "c1"):
        with pytest.raises(ConversationBusyError, match="正在执行另一轮请求"):
            with TurnLocks(tmp_path).hold("u/c1", "c1"):
                pass
        with locks.hold("u/c2", "c2"):
            pass
    with locks.hold("u/c1", "c1"):
        pass


MOUNTS = """\
/dev/sda1 / ext4 rw,relatime 0 0
fileserver:/export /srv/shared nfs4 rw,relatime 0 0
//nas/plans /mnt/nas cifs rw 0 0
tmpfs /tmp tmpfs rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "refused"),
    [("/srv/shared/plangraph", "nfs4"), ("/mnt/nas/x", "cifs"), ("/srv/sharedness", None), ("/tmp/d", None)],
)
def test_a_data_dir_on_a_network_filesystem_is_refused(path, refused):
    from plangraph.errors import UserFacingError
    from plangraph.turn_lock import check_data_dir

    if refused is None:
        check_data_dir(Path(path), MOUNTS)
        return
    with pytest.raises(UserFacingError, match=f"网络文件系统（{refused}）") as caught:
        check_data_dir(Path(path), MOUNTS)
    assert "PLANGRAPH_DATA_DIR" in str(caught.value) and caught.value.exit_code == 2


def test_one_users_turns_leave_a_worker_for_another_user(tmp_path):
    """Issue 12 item 11: twelve queued turns of one user took all 8 workers and slowed another
    user's quick turn from 0.2 s to 6.4 s. Now a user runs at most half the workers' turns at once."""
    import time

    data = tmp_path / "data"
    keys = "race-key-0123456789:racer,other-key-0123456789:other"
    env = cli_env(data, tmp_path, checkpoint_url="", PLANGRAPH_HTTP_WORKERS="2", PLANGRAPH_API_KEYS=keys)
    with two_servers(env, count=1) as (url,):
        conversations = [f"fair-{n}" for n in range(3)]
        for conversation in conversations:
            invoke(url, conversation, {"messages": [{"role": "user", "content": S1}]})
        finished: dict[str, float] = {}

        def timed(name: str, call) -> None:  # noqa: ANN001
            call()
            finished[name] = time.monotonic()

        import threading

        threads = [
            threading.Thread(target=timed, args=(c, lambda c=c: invoke(url, c, {"resume": ANSWERS[500]})))
            for c in conversations
        ]
        for t in threads:
            t.start()
        time.sleep(0.3)  # the racer's three turns are queued first
        quick = {"messages": [{"role": "user", "content": "分布式光伏余电上网电价怎么定？"}]}
        timed("other", lambda: invoke(url, "other-1", quick, key="other-key-0123456789"))
        for t in threads:
            t.join(timeout=300)
    first_racer = min(finished[c] for c in conversations)
    assert finished["other"] < first_racer, finished  # it did not wait for the racer's turns
