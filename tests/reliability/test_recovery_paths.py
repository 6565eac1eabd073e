"""Failure paths this suite found unhandled (tracebacks, shared state) and that are now clear
errors or recoveries; docs/reliability.md lists each with its fix."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memory import BlockMemory
from tests.reliability.s1_kill import cli_env
from tests.reliability.storage import hold_write_lock
from tests.support.openai_server import ScriptedOpenAIServer, fault_status
from tests.support.services import env_embeddings

QUESTION = "分布式光伏余电上网电价怎么定？"


def _cli(args: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "plangraph.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_locked_checkpoint_database_is_a_clear_error_not_a_traceback(tmp_path):
    data = tmp_path / "data"
    env = {**cli_env(data), "PLANGRAPH_SQLITE_TIMEOUT": "2"}
    assert _cli(["run", QUESTION, "--conversation", "c0", "--json"], env).returncode == 0
    hold_write_lock(data / "checkpoints.sqlite", seconds=60)
    proc = _cli(["run", QUESTION, "--conversation", "c1", "--json"], env)
    assert "Traceback" not in proc.stderr, proc.stderr[-800:]
    assert proc.returncode == 1
    assert "检查点数据库（正被其他进程占用）暂时不可用" in proc.stdout
    assert "plangraph resume --conversation c1" in proc.stdout


@pytest.mark.parametrize("status", [400, 401])
def test_model_endpoint_rejecting_a_request_is_a_clear_error_not_a_traceback(status, tmp_path):
    with ScriptedOpenAIServer([fault_status(status)] * 10, strict=False) as server:
        env = {
            **cli_env(tmp_path / "data"),
            "PLANGRAPH_MODEL": "scripted",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "wrong",
        }
        proc = _cli(["run", QUESTION, "--conversation", "c1", "--json"], env)
        assert len(server.requests) <= 2  # a rejected request is not retried over and over
    assert "Traceback" not in proc.stderr, proc.stderr[-800:]
    assert proc.returncode == 1
    assert str(status) in proc.stdout and "模型服务" in proc.stdout


def test_corrupt_chroma_directory_is_rebuilt_or_reported_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANGRAPH_EMBEDDINGS", "hash")  # as the CLI runs below
    data = tmp_path / "data"
    env = cli_env(data)
    assert _cli(["run", QUESTION, "--conversation", "c0", "--json"], env).returncode == 0
    for path in (data / "memory" / "chroma").rglob("chroma.sqlite3"):
        path.write_bytes(b"not a database" * 64)
    proc = _cli(["run", QUESTION, "--conversation", "c1", "--json"], env)
    assert "Traceback" not in proc.stderr, proc.stderr[-800:]
    assert proc.returncode == 0, proc.stdout[-800:]
    assert "is damaged" in proc.stderr and list((data / "memory").glob("chroma.corrupt-*"))
    from nodes.kit.step import memory_namespace

    namespace = memory_namespace("planner", "bob", "c0")
    memory = BlockMemory(data / "memory", env_embeddings())
    hits = memory.search(namespace, QUESTION)
    blocks = len(memory.list_blocks(namespace))
    # A CJK query is ranked by BM25 alone (MiniLM is English), so look at the vector side directly.
    vectors = memory._vectors.count(namespace, len(memory._vectors.embed(["x"])[0]))
    memory.close()
    assert hits and QUESTION in hits[0].text
    assert blocks and vectors == blocks  # c0's vectors are back in the new Chroma directory


@pytest.mark.parametrize(
    "value", [2**64, {"city": "杭州", "capacity_kw": -(2**70)}, {"answer": "x", "n": [2**65]}]
)
def test_resume_value_the_checkpointer_cannot_store_is_rejected_clearly(value, data_dir):
    """Was: TypeError "Integer exceeds 64-bit range" from the checkpointer, a traceback."""
    import sqlite3
    import uuid

    from langgraph.checkpoint.sqlite import SqliteSaver

    from graphs.context import Context
    from graphs.main import build_graph
    from plangraph.runner import PlanRunner, UserFacingError
    from tests.unit.core.fake_agents import SPECS, TEMPLATES

    data_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False) as conn:
        graph = build_graph(checkpointer=SqliteSaver(conn), specs=SPECS, templates=TEMPLATES)
        runner = PlanRunner(graph, Context(user_id="u", conversation_id=uuid.uuid4().hex))
        assert runner.run("查询城市然后汇总").interrupt is not None
        before = graph.get_state(runner.config).config["configurable"]["checkpoint_id"]
        with pytest.raises(UserFacingError):
            runner.resume(value)
        assert graph.get_state(runner.config).config["configurable"]["checkpoint_id"] == before


@pytest.mark.parametrize(("user", "conversation"), [("..", ".."), ("..", "c1"), (".", "..")])
def test_dot_dot_ids_keep_report_files_inside_the_artifact_folder(tmp_path, user, conversation):
    """`tools/pv_case._safe` used to keep "." and "..", so user ".." + conversation ".." writes the
    report into the parent of the data dir."""
    from types import SimpleNamespace

    from nodes.agents._pv import artifact_path

    data = tmp_path / "data"
    ctx = SimpleNamespace(data_dir=data, user_id=user, conversation_id=conversation, plan_id="plan_1")
    path = artifact_path(ctx, "report", "md").resolve()
    assert path.is_relative_to((data / "artifacts").resolve())
    assert len(path.relative_to((data / "artifacts").resolve()).parts) == 3


def test_ids_with_underscores_do_not_share_memory(tmp_path, data_dir):
    """The namespace `{agent}_{user}_{conversation}` of user "a_b"/conversation "c" equals
    that of user "a"/conversation "b_c" before ids were escaped: one user read the other's memory."""
    from langchain_core.messages import HumanMessage

    from nodes.kit.step import memory_namespace

    memory = BlockMemory(tmp_path / "mem", env_embeddings())
    first = memory_namespace("pv_calc", "a_b", "c")
    memory.register_namespace(first, "a_b", "c", "pv_calc")
    memory.add_messages(first, [HumanMessage("a_b 的私密测算：装机 777kW")])
    second = memory_namespace("pv_calc", "a", "b_c")
    seen = memory.messages(second)
    memory.close()
    assert seen == []


def test_another_user_cannot_open_a_conversation_by_its_id(data_dir):
    """The CLI's checkpoint thread is the conversation id alone, so the owner is recorded in the
    checkpoint metadata: another user id with the same conversation id neither reads, resumes nor
    continues the first user's plan."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from graphs.context import Context
    from graphs.main import build_graph
    from plangraph.runner import PlanRunner, UserFacingError
    from tests.unit.core.fake_agents import SPECS, TEMPLATES

    data_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False) as conn:
        graph = build_graph(checkpointer=SqliteSaver(conn), specs=SPECS, templates=TEMPLATES)
        alice = PlanRunner(graph, Context(user_id="alice", conversation_id="shared-id"))
        assert alice.run("查询城市然后汇总").interrupt is not None
        mallory = PlanRunner(graph, Context(user_id="mallory", conversation_id="shared-id"))
        assert mallory.current_plan() is None
        with pytest.raises(UserFacingError, match="找不到会话"):
            mallory.resume("城市是上海")
        with pytest.raises(UserFacingError, match="已被其他用户使用"):
            mallory.run("查询城市然后汇总")
        assert alice.current_plan()["steps"][0]["status"] == "interrupted"


def test_different_ids_never_share_an_artifact_folder(tmp_path):
    from types import SimpleNamespace

    from nodes.agents._pv import artifact_path

    ids = ["a_b", "a/b", "a%2Fb", "a b", "a.b", ".ab", "%2Eab", "", "%", "..", "用户", "a\\b"]
    folders = {
        artifact_path(
            SimpleNamespace(data_dir=tmp_path, user_id=user, conversation_id="c", plan_id="p"), "r", "md"
        ).parent
        for user in ids
    }
    assert len(folders) == len(ids)
    assert all(folder.resolve().parent.parent == (tmp_path / "artifacts").resolve() for folder in folders)
