"""Storage faults the product recovers from today: a briefly locked checkpoint database, a lost
Chroma directory (vectors re-sent from SQLite), a missing offloaded blob.

The recoveries added after this suite found them are in test_recovery_paths.py.
"""

from __future__ import annotations

import shutil
import sqlite3
import time

import pytest

from memory import BlockMemory, UnknownDataIdError
from plangraph.runner import PlanRunner
from tests.reliability.storage import FACT, filled_memory, hold_write_lock, restart_chroma
from tests.support.services import env_embeddings
from tools.memory_tools import make_memory_tools

QUESTION = "分布式光伏余电上网电价怎么定？"


def test_checkpoint_database_locked_briefly_by_another_writer_waits_and_completes(data_dir):
    with PlanRunner.open(user_id="u", conversation_id="warm") as runner:
        runner.run(QUESTION)  # creates the database; also warms the knowledge index
    start = time.perf_counter()
    hold_write_lock(data_dir / "checkpoints.sqlite", seconds=1.5)
    with PlanRunner.open(user_id="u", conversation_id="locked") as runner:
        outcome = runner.run(QUESTION)
    assert time.perf_counter() - start >= 1.5  # it waited for the other writer, then went on
    assert [s["status"] for s in outcome.plan["steps"]] == ["completed"]
    with PlanRunner.open(user_id="u", conversation_id="locked") as runner:
        assert runner.current_plan()["planId"] == outcome.plan["planId"]  # and it was checkpointed


def test_lost_chroma_directory_is_rebuilt_from_the_vectors_in_sqlite(tmp_path, data_dir):
    memory, ns, data_id = filled_memory(tmp_path / "mem")
    before = memory.search(ns, FACT)[0].metadata["cosine"]
    memory.close()
    restart_chroma()
    shutil.rmtree(tmp_path / "mem" / "chroma")
    reopened = BlockMemory(tmp_path / "mem", env_embeddings())
    hits = reopened.search(ns, FACT)
    assert hits and FACT in hits[0].text
    # A block without a vector scores cosine 0; hash embeddings give any other value, sign included.
    assert before != 0 and hits[0].metadata["cosine"] == pytest.approx(before)  # vector side is back
    assert len(reopened.messages(ns)) == 4
    assert reopened.load(data_id, 0, 20, namespace=ns) == "year,cashflow\n0,0.0\n"
    reopened.close()


def test_missing_offloaded_blob_is_a_tool_error_that_lists_what_exists(tmp_path, data_dir):
    memory, ns, data_id = filled_memory(tmp_path / "mem")
    with sqlite3.connect(tmp_path / "mem" / "memory.sqlite3") as conn:
        conn.execute("DELETE FROM blobs WHERE id=?", (data_id.removeprefix("store://"),))
    load = {t.name: t for t in make_memory_tools(memory, ns)}["load"]
    reply = load.invoke({"name": "load", "args": {"data_id": data_id}, "id": "call_9", "type": "tool_call"})
    assert reply.status == "error"
    assert f"无法读取 {data_id}" in reply.content and "本对话可用的数据 id" in reply.content
    try:
        memory.load(data_id)
    except UnknownDataIdError as error:
        assert "does not exist" in str(error)
    else:
        raise AssertionError("a missing blob must raise UnknownDataIdError")
    window = memory.disclose(ns, 2000, system_prompt="sys")
    assert any(data_id in str(m.content) for m in window)  # the conversation still renders
    memory.close()
