"""`plangraph pending` / `plangraph remind` on real waiting plans (S1 run through PlanRunner)."""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
import time
import uuid
from pathlib import Path

import pytest

from plangraph.cli import main
from plangraph.runner import PlanRunner, UserFacingError
from plangraph.waiting import HOOK_ENV, format_age, load_hook, parse_duration, remind
from tests.integration.scenarios.test_scenarios import S1, S1_ANSWER
from tests.support.services import graph_plans

HOUR = 3600


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A data dir where alice waits in c1 and c2, bob in c3, and carol's plan (c4) completed."""
    data = tmp_path_factory.mktemp("waiting")
    plan_ids = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLANGRAPH_EMBEDDINGS", "hash")
        mp.delenv("PLANGRAPH_MODEL", raising=False)
        for user, conv in (("alice", "c1"), ("alice", "c2"), ("bob", "c3"), ("carol", "c4")):
            with PlanRunner.open(
                user_id=user, conversation_id=conv, data_dir=str(data), checkpoint_url=""
            ) as runner:
                outcome = runner.run(S1)
                assert outcome.interrupt is not None
                if conv == "c4":
                    assert runner.resume(S1_ANSWER).interrupt is None
                plan_ids[conv] = outcome.plan["planId"]
    return data / "plans.sqlite", plan_ids


@pytest.fixture
def plans(seeded, data_dir):
    """A private copy of the seeded plan store in this test's data dir; returns conv → planId."""
    source, plan_ids = seeded
    data_dir.mkdir(parents=True)
    src, dst = sqlite3.connect(source), sqlite3.connect(data_dir / "plans.sqlite")
    src.backup(dst)
    src.close()
    dst.close()
    return plan_ids


def _asked(data_dir: Path, plan_id: str, seconds_ago: float, now: float | None = None) -> None:
    """Pretend the plan's question was asked `seconds_ago` before `now`."""
    with sqlite3.connect(data_dir / "plans.sqlite") as db:
        db.execute(
            "UPDATE plans SET updated_at = ? WHERE plan_id = ?",
            ((time.time() if now is None else now) - seconds_ago, plan_id),
        )
    db.close()


def _hook_module(tmp_path: Path, log: Path, fail_on: str = "") -> str:
    """A Python hook module in `tmp_path` that logs each payload and raises for plan `fail_on`."""
    name = f"hook_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        "import json, pathlib\n"
        "def remind(payload):\n"
        f"    if payload['planId'] == {fail_on!r}:\n"
        "        raise RuntimeError('sms gateway down')\n"
        f"    with pathlib.Path({str(log)!r}).open('a', encoding='utf-8') as fh:\n"
        "        fh.write(json.dumps(payload, ensure_ascii=False) + '\\n')\n",
        encoding="utf-8",
    )
    return f"{name}:remind"


def _command(tmp_path: Path, log: Path) -> str:
    """A command hook: logs stdin JSON and the PLANGRAPH_* env; exits 1 for the plan in `fail`."""
    script = tmp_path / "notify.py"
    script.write_text(
        "import json, os, pathlib, sys\n"
        "payload = json.load(sys.stdin)\n"
        "names = ['PLAN_ID', 'USER_ID', 'CONVERSATION_ID', 'SEQ_NO', 'QUESTION', 'WAITING_SECONDS']\n"
        "env = {f'PLANGRAPH_{n}': os.environ.get(f'PLANGRAPH_{n}') for n in names}\n"
        f"fail = pathlib.Path({str(tmp_path / 'fail')!r})\n"
        "if fail.exists() and fail.read_text() == payload['planId']:\n"
        "    print('gateway said no', file=sys.stderr)\n"
        "    sys.exit(4)\n"
        f"with open({str(log)!r}, 'a', encoding='utf-8') as fh:\n"
        "    fh.write(json.dumps({'stdin': payload, 'env': env}, ensure_ascii=False) + '\\n')\n",
        encoding="utf-8",
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def _lines(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def test_pending_lists_waiting_plans_per_user_newest_first(plans, data_dir, capsys):
    now = time.time()
    _asked(data_dir, plans["c1"], 2 * HOUR, now)
    _asked(data_dir, plans["c2"], 5 * 60, now)
    _asked(data_dir, plans["c3"], 3 * 86400, now)
    assert main(["pending"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 个计划在等待回答")
    rows = [line for line in out.splitlines() if line.startswith("- ")]
    assert [r.split(" · ")[0] for r in rows] == ["- 5分钟前", "- 2小时前", "- 3天前"]
    assert [plans[c] in r for r, c in zip(rows, ("c2", "c1", "c3"), strict=True)] == [True] * 3
    assert "用户 alice · 会话 c2" in rows[0] and "步骤 0" in rows[0]
    assert out.count("装机容量") == 3 and plans["c4"] not in out  # carol's plan is finished

    assert main(["pending", "--user", "alice", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(p["conversationId"], p["planId"]) for p in listed] == [("c2", plans["c2"]), ("c1", plans["c1"])]
    assert listed[1]["seqNo"] == 0 and listed[1]["age"] == "2小时前"
    assert 2 * HOUR <= listed[1]["waitingSeconds"] < 2 * HOUR + 60
    assert "装机容量" in listed[1]["question"] and listed[1]["userId"] == "alice"

    assert main(["pending", "--user", "carol"]) == 0
    assert capsys.readouterr().out.strip() == "用户 carol 没有等待回答的计划。"


def test_pending_on_a_fresh_data_dir_says_nothing_is_waiting(data_dir, capsys):
    assert main(["pending"]) == 0
    assert capsys.readouterr().out.strip() == "没有等待回答的计划。"
    assert not data_dir.exists()  # looking creates nothing
    assert main(["pending", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_remind_once_per_interval_and_never_for_finished_plans(plans, data_dir):
    t0 = time.time()
    _asked(data_dir, plans["c1"], 2 * HOUR, t0)
    _asked(data_dir, plans["c2"], 5 * 60, t0)
    _asked(data_dir, plans["c3"], 3 * 86400, t0)
    _asked(data_dir, plans["c4"], 10 * 86400, t0)  # completed long ago: never reminded
    store = graph_plans(data_dir)
    calls: list[dict] = []

    def run(at: float) -> list[str]:
        before = len(calls)
        outcomes = remind(store, calls.append, HOUR, now=at)
        assert all(o.error is None for o in outcomes)
        return [c["planId"] for c in calls[before:]]

    assert run(t0) == [plans["c3"], plans["c1"]]  # longest waiting first
    assert calls[1] == {
        "planId": plans["c1"],
        "userId": "alice",
        "conversationId": "c1",
        "seqNo": 0,
        "question": calls[1]["question"],
        "waitingSeconds": 2 * HOUR,
    }
    assert "装机容量" in calls[1]["question"]
    assert run(t0 + 60) == []  # cron a minute later: already reminded this hour
    assert run(t0 + 55 * 60) == [plans["c2"]]  # c2 has now waited an hour
    assert run(t0 + 59 * 60) == []
    assert run(t0 + HOUR - 5) == [plans["c3"], plans["c1"]]  # next interval (cron a few s early)
    assert run(t0 + HOUR + 60) == []
    assert plans["c4"] not in {c["planId"] for c in calls}


def test_remind_python_hook_from_the_working_dir_through_the_cli(
    plans, data_dir, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(sys, "path", list(sys.path))  # the hook loader adds the working dir
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "reminded.jsonl"
    hook = _hook_module(tmp_path, log, fail_on=plans["c3"])
    for conv in ("c1", "c2", "c3"):
        _asked(data_dir, plans[conv], 2 * HOUR)

    assert main(["remind", "--older-than", "1h", "--hook", hook]) == 1  # c3's hook call failed
    captured = capsys.readouterr()
    assert {p["planId"] for p in _lines(log)} == {plans["c1"], plans["c2"]}
    assert f"计划 {plans['c3']}" in captured.err and "RuntimeError: sms gateway down" in captured.err
    assert "已提醒 2 个，失败 1 个。" in captured.out

    log.unlink()
    hook = _hook_module(tmp_path, log)  # gateway back
    assert main(["remind", "--older-than", "1h", "--hook", hook]) == 0
    assert [p["planId"] for p in _lines(log)] == [plans["c3"]]  # only the failed one is retried
    assert main(["remind", "--older-than", "1h", "--hook", hook]) == 0
    assert len(_lines(log)) == 1


def test_remind_command_hook_gets_json_on_stdin_and_env(plans, data_dir, tmp_path, monkeypatch, capsys):
    log = tmp_path / "reminded.jsonl"
    monkeypatch.setenv(HOOK_ENV, _command(tmp_path, log))
    monkeypatch.delenv("PLANGRAPH_USER_ID", raising=False)
    _asked(data_dir, plans["c1"], 90 * 60)
    _asked(data_dir, plans["c3"], 30 * 60)
    (tmp_path / "fail").write_text(plans["c3"])

    assert main(["remind", "--older-than", "20m"]) == 1
    err = capsys.readouterr().err
    assert f"计划 {plans['c3']}" in err and "命令退出码 4：gateway said no" in err
    [seen] = _lines(log)
    assert seen["stdin"]["planId"] == plans["c1"] and seen["stdin"]["seqNo"] == 0
    assert 90 * 60 <= seen["stdin"]["waitingSeconds"] < 90 * 60 + 60
    assert seen["env"] == {
        "PLANGRAPH_PLAN_ID": plans["c1"],
        "PLANGRAPH_USER_ID": "alice",
        "PLANGRAPH_CONVERSATION_ID": "c1",
        "PLANGRAPH_SEQ_NO": "0",
        "PLANGRAPH_QUESTION": seen["stdin"]["question"],
        "PLANGRAPH_WAITING_SECONDS": str(seen["stdin"]["waitingSeconds"]),
    }
    assert "装机容量" in seen["env"]["PLANGRAPH_QUESTION"]

    (tmp_path / "fail").unlink()
    assert main(["remind", "--older-than", "20m", "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert [(o["planId"], o["reminded"], o["error"]) for o in outcome] == [(plans["c3"], True, None)]
    assert [x["stdin"]["planId"] for x in _lines(log)] == [plans["c1"], plans["c3"]]


def test_hook_timeouts_fail_the_plan_not_the_run(plans, data_dir, tmp_path, capsys):
    _asked(data_dir, plans["c1"], 2 * HOUR)
    sleeper = f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(10)'"
    started = time.monotonic()
    assert main(["remind", "--older-than", "1h", "--hook", sleeper, "--timeout", "0.5"]) == 1
    assert time.monotonic() - started < 5
    assert "命令超时（0.5 秒）" in capsys.readouterr().err
    assert graph_plans(data_dir).last_reminders() == {}


def test_python_hook_timeout_fails_the_plan(plans, data_dir, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "slow_hook.py").write_text("import time\ndef remind(payload):\n    time.sleep(2)\n")
    _asked(data_dir, plans["c1"], 2 * HOUR)
    [outcome] = remind(graph_plans(data_dir), load_hook("slow_hook:remind", timeout=0.2), HOUR)
    assert outcome.error is not None and "超时（0.2 秒）" in outcome.error
    assert graph_plans(data_dir).last_reminders() == {}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("15m", 900), ("1h", 3600), ("2d", 172800), ("1h30m", 5400), (" 2H ", 7200)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1", "h", "-1h", "1.5h", "1 h", "1w", "0m"])
def test_bad_durations_are_rejected_with_the_accepted_form(text):
    with pytest.raises(UserFacingError, match="30s、15m、1h、2d"):
        parse_duration(text)


def test_remind_bad_input_exits_2_before_touching_anything(plans, data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(HOOK_ENV, raising=False)
    _asked(data_dir, plans["c1"], 2 * HOUR)
    cases = [
        (["--older-than", "1x", "--hook", "true"], "无效的时长 '1x'"),
        (["--older-than", "1h"], f"--hook 或环境变量 {HOOK_ENV}"),
        (["--hook", "no-such-command-xyz --flag"], "找不到提醒命令 'no-such-command-xyz'"),
        (["--hook", "no_such_module_xyz:remind"], "无法导入提醒钩子 no_such_module_xyz:remind"),
        (["--hook", "json:no_such_function"], "不是可调用对象"),
        (["--hook", "'unbalanced"], "无法解析"),
    ]
    for extra, message in cases:
        assert main(["remind", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert graph_plans(data_dir).last_reminders() == {}


def test_a_second_remind_running_at_the_same_time_skips(plans, data_dir, tmp_path, capsys):
    import fcntl

    _asked(data_dir, plans["c1"], 2 * HOUR)
    log = tmp_path / "reminded.jsonl"
    with open(data_dir / "remind.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert main(["remind", "--hook", _command(tmp_path, log)]) == 0
    assert "正在运行" in capsys.readouterr().err and not log.exists()


def test_ages_read_naturally():
    assert [format_age(s) for s in (0, 59, 60, 3599, 7200, 86400 * 3 + 5)] == [
        "0秒前",
        "59秒前",
        "1分钟前",
        "59分钟前",
        "2小时前",
        "3天前",
    ]
