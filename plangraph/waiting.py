"""`plangraph pending` and `plangraph remind`: plans waiting for a user's answer.

A plan waits from the moment `ask_user` asks its question (the plan store's `interrupted` status and
`updated_at`). `remind` is meant for cron or a scheduler, e.g. every minute::

    * * * * * cd /srv/pv && .venv/bin/plangraph remind --older-than 1h --hook "bin/notify --channel sms"

It calls the hook for each plan waiting at least `--older-than` whose user was not reminded within
the last `--older-than`, and records the reminder in the plan store; a failed hook is not recorded,
so the next run tries again. There is no polling inside the graph.

A hook is either a Python callable `pkg.mod:func` (imported with the current directory on
`sys.path`), called with one dict, or a command run without a shell, which gets the same dict as
JSON on stdin and as environment variables (PLANGRAPH_PLAN_ID, PLANGRAPH_USER_ID,
PLANGRAPH_CONVERSATION_ID, PLANGRAPH_SEQ_NO, PLANGRAPH_QUESTION, PLANGRAPH_WAITING_SECONDS).
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs.context import Context, SettingError
from plangraph.errors import UserFacingError
from tools.plans.store import PlanStore

__all__ = [
    "HOOK_ENV",
    "open_store",
    "HookFailedError",
    "Reminder",
    "WaitingPlan",
    "configure_pending",
    "configure_remind",
    "format_age",
    "load_hook",
    "parse_duration",
    "remind",
    "run_pending",
    "run_remind",
    "waiting_plans",
]

HOOK_ENV = "PLANGRAPH_REMIND_HOOK"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(?:[0-9]+[smhd])+")
_CALLABLE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_ENV_NAMES = {
    "planId": "PLANGRAPH_PLAN_ID",
    "userId": "PLANGRAPH_USER_ID",
    "conversationId": "PLANGRAPH_CONVERSATION_ID",
    "seqNo": "PLANGRAPH_SEQ_NO",
    "question": "PLANGRAPH_QUESTION",
    "waitingSeconds": "PLANGRAPH_WAITING_SECONDS",
}

Hook = Callable[[dict[str, Any]], None]


class HookFailedError(Exception):
    """The reminder hook failed for one plan (exception, non-zero exit or timeout)."""


@dataclass(frozen=True)
class WaitingPlan:
    """A plan suspended on a question; `asked_at` is a Unix time."""

    plan_id: str
    user_id: str
    conversation_id: str
    seq_no: int | None
    question: str
    asked_at: float
    waiting_seconds: int

    def payload(self) -> dict[str, Any]:
        """What a reminder hook receives."""
        return {
            "planId": self.plan_id,
            "userId": self.user_id,
            "conversationId": self.conversation_id,
            "seqNo": self.seq_no,
            "question": self.question,
            "waitingSeconds": self.waiting_seconds,
        }


@dataclass(frozen=True)
class Reminder:
    """The outcome of reminding one plan's user: `error` is None when the hook succeeded."""

    plan: WaitingPlan
    error: str | None = None


# --- durations and ages -------------------------------------------------------------------------


def parse_duration(text: str) -> int:
    """Seconds in a duration like 30s, 15m, 1h, 2d or 1h30m; UserFacingError when it is not one."""
    raw = (text or "").strip().lower()
    if not _DURATION.fullmatch(raw):
        raise UserFacingError(f"无效的时长 {text!r}：请写成数字加单位 s/m/h/d，例如 30s、15m、1h、2d。")
    seconds = sum(int(n) * _UNITS[u] for n, u in re.findall(r"([0-9]+)([smhd])", raw))
    if seconds <= 0:
        raise UserFacingError(f"时长 {text!r} 必须大于 0，例如 30s、15m、1h、2d。")
    return seconds


def format_age(seconds: float) -> str:
    """How long ago, in Chinese and in the largest whole unit: 45秒前, 5分钟前, 2小时前, 3天前."""
    s = max(0, int(seconds))
    for unit, name in ((86400, "天"), (3600, "小时"), (60, "分钟")):
        if s >= unit:
            return f"{s // unit}{name}前"
    return f"{s}秒前"


# --- waiting plans ------------------------------------------------------------------------------


def waiting_plans(
    store: PlanStore, *, user_id: str | None = None, now: float | None = None
) -> list[WaitingPlan]:
    """Plans waiting for an answer (all users, or one), the most recently asked first."""
    now = time.time() if now is None else now
    found = []
    for record in store.list(user_id=user_id, status="interrupted"):
        step = next((s for s in record["plan"].get("steps", []) if s.get("status") == "interrupted"), None)
        found.append(
            WaitingPlan(
                plan_id=record["planId"],
                user_id=record["userId"],
                conversation_id=record["conversationId"],
                seq_no=None if step is None else int(step["seqNo"]),
                question=record["question"] or "",
                asked_at=record["updatedAt"],
                waiting_seconds=max(0, int(now - record["updatedAt"])),
            )
        )
    return found


def remind(store: PlanStore, hook: Hook, older_than: int, *, now: float | None = None) -> list[Reminder]:
    """Call `hook` for each plan waiting ≥ `older_than` s and not reminded in the last `older_than` s.

    A success is recorded (at `now`); a failure is reported and not recorded, so it is retried.
    The repeat interval allows a little slack (a tenth, at most 30 s), so a scheduler that starts
    a few seconds early does not push the next reminder to its following tick.
    """
    now = time.time() if now is None else now
    last = store.last_reminders()
    again = older_than - min(30.0, older_than / 10)
    due = [
        p
        for p in reversed(waiting_plans(store, now=now))
        if p.waiting_seconds >= older_than and now - last.get(p.plan_id, float("-inf")) >= again
    ]
    outcomes = []
    for plan in due:
        try:
            hook(plan.payload())
        except HookFailedError as error:
            outcomes.append(Reminder(plan, str(error)))
            continue
        store.record_reminder(plan.plan_id, now)
        outcomes.append(Reminder(plan))
    return outcomes


# --- hooks --------------------------------------------------------------------------------------


def load_hook(spec: str, timeout: float = 30.0) -> Hook:
    """A hook from `pkg.mod:func` or a command line; UserFacingError when it cannot be used."""
    spec = spec.strip()
    if not spec:
        raise UserFacingError(
            f"没有配置提醒钩子：请用 --hook 或环境变量 {HOOK_ENV} 指定 pkg.mod:func 或一条命令。"
        )
    if _CALLABLE.fullmatch(spec):
        return _python_hook(spec, timeout)
    return _command_hook(spec, timeout)


def _python_hook(spec: str, timeout: float) -> Hook:
    module_name, _, attr = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like uvicorn/gunicorn: hooks may live in the working dir
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as error:
        raise UserFacingError(
            f"无法导入提醒钩子 {spec}：{type(error).__name__}: {error}。请确认模块在当前目录或 PYTHONPATH 中。"
        ) from None
    for part in attr.split("."):
        target = getattr(target, part, None)
    if not callable(target):
        raise UserFacingError(f"提醒钩子 {spec} 不是可调用对象：请检查 {module_name} 中的 {attr}。")
    func: Callable[[dict[str, Any]], object] = target

    def call(payload: dict[str, Any]) -> None:
        failure: list[BaseException] = []

        def run() -> None:
            try:
                func(dict(payload))
            except BaseException as error:  # reported per plan by remind(); the others still run
                failure.append(error)

        worker = threading.Thread(target=run, name=f"remind-{payload['planId']}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise HookFailedError(f"{spec} 超时（{timeout:g} 秒）")
        if failure:
            raise HookFailedError(f"{spec} 出错：{type(failure[0]).__name__}: {failure[0]}")

    return call


def _command_hook(spec: str, timeout: float) -> Hook:
    try:
        argv = shlex.split(spec)
    except ValueError as error:
        raise UserFacingError(f"提醒命令 {spec!r} 无法解析（{error}）：请检查引号。") from None
    program = shutil.which(argv[0])
    if program is None:
        raise UserFacingError(
            f"找不到提醒命令 {argv[0]!r}：请写可执行文件的路径，或 pkg.mod:func 形式的 Python 函数。"
        )

    def call(payload: dict[str, Any]) -> None:
        env = {**os.environ, **{_ENV_NAMES[k]: "" if v is None else str(v) for k, v in payload.items()}}
        try:
            done = subprocess.run(
                [program, *argv[1:]],
                input=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                capture_output=True,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise HookFailedError(f"命令超时（{timeout:g} 秒）：{spec}") from None
        except OSError as error:
            raise HookFailedError(f"命令无法运行：{spec}：{error}") from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = f"：{lines[-1][:300]}" if lines else ""
            raise HookFailedError(f"命令退出码 {done.returncode}{detail}")

    return call


# --- command line -------------------------------------------------------------------------------


def configure_pending(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph pending`."""
    parser.add_argument("--user", default=None, help="only this user's plans")
    parser.add_argument("--json", action="store_true", help="a JSON array instead of text")


def configure_remind(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph remind`."""
    parser.add_argument(
        "--older-than",
        default="1h",
        help="remind plans waiting this long, once per this interval (30s, 15m, 1h, 2d)",
    )
    parser.add_argument(
        "--hook", default=None, help=f"python callable 'pkg.mod:func' or a command (env {HOOK_ENV})"
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds one hook call may take (default 30)"
    )
    parser.add_argument("--json", action="store_true", help="a JSON array of outcomes instead of text")


def _store(data_dir: str | None = None) -> PlanStore | None:
    """The plan store of the data dir (as the runner resolves it), or None when there is none yet.

    A data dir that is a file is a SettingError; one that does not exist is said on stderr (a
    mistyped --data-dir would otherwise read as "no conversations"), and there is no store.
    """
    path = Path(data_dir or Context().data_dir).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise SettingError(
            f"the data directory {path} cannot be used (it is a file, not a folder); set --data-dir or "
            "PLANGRAPH_DATA_DIR to the folder plangraph run wrote to"
        )
    if not path.exists():
        print(
            f"数据目录 {path} 不存在，这里还没有运行过 plangraph。若会话在别处，用 --data-dir 或 "
            "PLANGRAPH_DATA_DIR 指向它。",
            file=sys.stderr,
        )
    return PlanStore(path / "plans.sqlite") if (path / "plans.sqlite").is_file() else None


def open_store(data_dir: str | None = None) -> PlanStore | None:
    """The plan store of `data_dir` (default: PLANGRAPH_DATA_DIR), or None before the first run."""
    return _store(data_dir)


def run_pending(args: argparse.Namespace) -> int:
    """List waiting plans, newest first."""
    store = _store(getattr(args, "data_dir", None))
    now = time.time()
    plans = waiting_plans(store, user_id=args.user, now=now) if store else []
    if args.json:
        rows = [
            {**p.payload(), "askedAt": _iso(p.asked_at), "age": format_age(p.waiting_seconds)} for p in plans
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not plans:
        print(f"用户 {args.user} 没有等待回答的计划。" if args.user else "没有等待回答的计划。")
        return 0
    print(f"{len(plans)} 个计划在等待回答（最新在前）：")
    for p in plans:
        step = "?" if p.seq_no is None else p.seq_no
        print(
            f"- {format_age(p.waiting_seconds)} · 用户 {p.user_id} · 会话 {p.conversation_id} · 计划 {p.plan_id} · 步骤 {step}"
        )
        print(f"  {p.question}")
    return 0


def run_remind(args: argparse.Namespace) -> int:
    """Call the hook for plans waiting too long; exit 1 when any hook call failed."""
    older_than = parse_duration(args.older_than)
    if args.timeout <= 0:
        raise UserFacingError("--timeout 必须大于 0 秒。")
    hook = load_hook(args.hook or os.environ.get(HOOK_ENV, ""), args.timeout)
    store = _store(getattr(args, "data_dir", None))
    if store is None:
        outcomes: list[Reminder] = []
    else:
        with _exclusive(store.path.with_name("remind.lock")) as alone:
            if not alone:
                print("另一个 plangraph remind 正在运行，本次跳过。", file=sys.stderr)
                return 0
            outcomes = remind(store, hook, older_than)
    failed = [o for o in outcomes if o.error]
    if args.json:
        rows = [{**o.plan.payload(), "reminded": o.error is None, "error": o.error} for o in outcomes]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 1 if failed else 0
    for o in outcomes:
        where = f"用户 {o.plan.user_id} · 会话 {o.plan.conversation_id} · 计划 {o.plan.plan_id}"
        if o.error:
            print(f"提醒失败：{where}：{o.error}（下次运行重试）", file=sys.stderr)
        else:
            print(f"已提醒：{where}（已等待 {format_age(o.plan.waiting_seconds).removesuffix('前')}）")
    if not outcomes:
        print(f"没有需要提醒的计划：没有等待超过 {args.older_than}、且这段时间内未提醒过的计划。")
    else:
        print(f"已提醒 {len(outcomes) - len(failed)} 个，失败 {len(failed)} 个。")
    return 1 if failed else 0


def _iso(ts: float) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[bool]:
    """Hold an exclusive lock on `lock_path` (True), or say another process holds it (False)."""
    with open(lock_path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
