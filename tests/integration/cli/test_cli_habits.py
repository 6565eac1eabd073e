"""CLI habits a new user notices: version, data dir, output once, conversations, memory, chat, pipes."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
REQUEST = "帮我生成一份光伏经济测算报告"
ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
QUESTION_END = "也可以告诉我屋顶面积，如“屋顶面积3000平方米”）。"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    return {**env, "PLANGRAPH_EMBEDDINGS": "hash", "COLUMNS": "80"}


def _cli(*args: str, data: Path, **kw) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "plangraph.cli", "--data-dir", str(data), *args]
    return subprocess.run(cmd, env=_env(), cwd=ROOT, capture_output=True, text=True, timeout=240, **kw)


@pytest.fixture(scope="module")
def s1(tmp_path_factory):
    """One S1 run in its own data dir, as a user types it (not a TTY: the answer comes from --answer)."""
    data = tmp_path_factory.mktemp("cli")
    done = _cli("run", REQUEST, "--conversation", "demo", "--answer", ANSWER, data=data)
    assert done.returncode == 0, done.stderr
    return data, done.stdout


def _unboxed(text: str) -> str:
    """Panel text with the box drawing and line breaks taken out."""
    return re.sub(r"[│╭╮╰╯─\s]", "", text)


def test_version_and_the_help_say_what_they_should():
    done = subprocess.run(
        [sys.executable, "-m", "plangraph.cli", "--version"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0 and re.fullmatch(r"plangraph \d+\.\d+\.\d+\n", done.stdout)
    helptext = subprocess.run(
        [sys.executable, "-m", "plangraph.cli", "plan", "--help"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    assert "Graphviz" in helptext


def test_one_s1_run_shows_each_table_and_the_file_list_once_and_the_whole_question(s1):
    data, out = s1
    assert out.count("| 单瓦造价 | -20%") == 1
    assert out.count("净现值 NPV") == 1
    assert out.count("报告与文件") == 1 and "生成的文件" not in out
    assert out.count("_tornado.png\n") == 1  # the file list's line (the panel names it once more, wrapped)
    assert _unboxed(QUESTION_END) in _unboxed(out)  # the question panel wraps instead of cutting
    assert all(len(line) <= 80 for line in out.splitlines() if line.startswith(("│", "╭", "╰")))
    assert len(out.splitlines()) < 110
    assert (data / "plans.sqlite").is_file()  # --data-dir was used


def test_conversations_lists_the_run_with_request_status_and_time(s1):
    data, _ = s1
    done = _cli("conversations", data=data)
    assert done.returncode == 0, done.stderr
    assert re.search(r"- demo · 已完成 · \d+秒前\n  帮我生成一份光伏经济测算报告", done.stdout), done.stdout
    other = _cli("conversations", "--user", "nobody", data=data)
    assert "还没有会话" in other.stdout


def test_memory_blocks_and_search_look_through_one_conversation(s1):
    data, _ = s1
    blocks = _cli("memory", "blocks", "--conversation", "demo", data=data)
    assert blocks.returncode == 0, blocks.stderr
    assert re.search(r"^planner · b_\S+ · \w+ · \d{4}-", blocks.stdout, re.M), blocks.stdout
    found = _cli("memory", "search", "余杭 装机容量", "--conversation", "demo", "--json", data=data)
    assert found.returncode == 0, found.stderr
    assert "余杭" in found.stdout and '"score"' in found.stdout
    nothing = _cli("memory", "blocks", "--conversation", "other", data=data)
    assert "没有记忆块" in nothing.stdout
    wrong = _cli("memory", "blocks", "--conversation", "demo", "--agent", "nope", data=data)
    assert wrong.returncode == 2 and "pv_calc" in wrong.stderr


def test_piping_into_head_stops_quietly(tmp_path):
    cmd = f'"{sys.executable}" -m plangraph.cli --data-dir "{tmp_path}" run "{REQUEST}" --answer "{ANSWER}" | head -n 2'
    done = subprocess.run(
        ["bash", "-c", cmd], env=_env(), cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert len(done.stdout.splitlines()) == 2
    assert done.stderr == "", done.stderr


def _read_until(fd: int, pattern: str, timeout: float = 180) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 65536).decode("utf-8", "replace")
            except OSError:
                break
            if re.search(pattern, seen):
                return seen
    raise AssertionError(f"no {pattern!r} in:\n{seen}")


def test_on_a_terminal_the_spinner_runs_from_the_start_not_only_after_loading(tmp_path):
    """Loading the graph and its agents takes a second or more: the terminal is not blank meanwhile.

    Before: nothing was shown until the runner was loaded and the conversation line printed.
    """
    master, slave = os.openpty()
    cmd = [sys.executable, "-m", "plangraph.cli", "--data-dir", str(tmp_path), "run", REQUEST]
    cmd += ["--conversation", "sp1", "--answer", ANSWER]
    proc = subprocess.Popen(cmd, env=_env(), cwd=ROOT, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        seen = _read_until(master, "报告与文件")
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    before = seen.split("会话：", 1)[0]
    assert re.search("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]", before), f"no spinner before the conversation line: {before!r}"


def test_chat_answers_the_question_inline_and_keeps_the_conversation(tmp_path):
    master, slave = os.openpty()
    cmd = [
        sys.executable,
        "-m",
        "plangraph.cli",
        "--data-dir",
        str(tmp_path),
        "chat",
        "--conversation",
        "ch1",
    ]
    proc = subprocess.Popen(cmd, env=_env(), cwd=ROOT, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    try:
        _read_until(master, "您> ")
        os.write(master, (REQUEST + "\n").encode())
        asked = _read_until(master, "回答> ")
        assert "需要您补充（步骤 0）" in asked
        os.write(master, (ANSWER + "\n").encode())
        done = _read_until(master, r"报告与文件：[\s\S]*您> ")
        assert "pv_calc_result" in done and "report_result" in done
        os.write(master, "其他参数不变，将地址更换到上海市后重新进行测算\n".encode())
        again = _read_until(master, r"计划执行结束[\s\S]*您> ")
        assert "上海市" in again and "pv_calc_result" in again
        os.write(master, b"exit\n")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    listed = _cli("conversations", data=tmp_path)
    assert "ch1 · 已完成" in listed.stdout
