"""Isolation at the library level: another user's blobs, memory and files are never reachable by
id guessing or path traversal. (tests/unit/memory covers search/list/load across namespaces and
`store://../…`; HTTP-level isolation across API keys lives with the HTTP API tests.)
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodes.agents._pv import artifact_path
from tests.reliability.storage import BIG_RESULT, filled_memory
from tools.memory_tools import make_memory_tools

TRAVERSAL = ["store://../memory.sqlite3", "store://../../etc/passwd", "../memory.sqlite3", "store://%2e%2e/x"]


@pytest.fixture(scope="module")
def two_users(tmp_path_factory):
    memory, alice, data_id = filled_memory(tmp_path_factory.mktemp("iso") / "mem")
    bob = memory.scope("pv_calc", "bob", "c1")
    yield memory, alice, bob, data_id
    memory.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    guess=st.sampled_from(TRAVERSAL)
    | st.text(max_size=60)
    | st.from_regex(r"store://[0-9a-f]{32}", fullmatch=True)
)
def test_load_tool_of_another_user_never_returns_their_blob(guess, two_users):
    memory, _, bob, data_id = two_users
    load = {t.name: t for t in make_memory_tools(memory, bob)}["load"]
    for candidate in (guess, data_id):
        reply = load.invoke({"name": "load", "args": {"data_id": candidate}, "id": "c", "type": "tool_call"})
        assert reply.status == "error"
        assert BIG_RESULT[:40] not in reply.content


def test_other_users_search_and_list_see_nothing_of_alice(two_users):
    memory, alice, bob, _ = two_users
    tools = {t.name: t for t in make_memory_tools(memory, bob)}
    assert "rooftop plant" not in tools["search_block"].invoke({"query": "installed capacity 500 kW"})
    assert tools["list_blocks"].invoke({}) == "当前还没有历史记忆块。"
    mine = {t.name: t for t in make_memory_tools(memory, alice)}
    assert "rooftop plant" in mine["search_block"].invoke({"query": "installed capacity 500 kW"})


@pytest.mark.parametrize(
    ("user", "conversation"),
    [
        ("../../evil", "c1"),
        ("alice", "../../../tmp/x"),
        ("a/b", "c\\d"),
        ("~root", "$HOME"),
        ("u", "..%2f.."),
    ],
)
def test_report_paths_with_traversal_in_ids_stay_in_the_users_artifact_folder(tmp_path, user, conversation):
    data = tmp_path / "data"
    ctx = SimpleNamespace(data_dir=data, user_id=user, conversation_id=conversation, plan_id="../plan_1")
    path = artifact_path(ctx, "report", "md").resolve()
    assert path.is_relative_to((data / "artifacts").resolve())
    assert len(path.relative_to((data / "artifacts").resolve()).parts) == 3  # user / conversation / file
    assert not any(Path(tmp_path).glob("*.md"))


def test_report_blobs_have_an_owner_and_another_users_load_cannot_read_them(tmp_path, monkeypatch):
    """Issue 12 item 4: report blobs had no owner, and unowned blobs were readable by id."""
    import sqlite3

    from memory import BlockMemory
    from plangraph.runner import PlanRunner
    from tests.reliability.races import ANSWERS, S1
    from tests.support.services import env_embeddings

    monkeypatch.setenv("PLANGRAPH_EMBEDDINGS", "hash")
    monkeypatch.delenv("PLANGRAPH_MODEL", raising=False)
    data = tmp_path / "data"
    with PlanRunner.open(
        user_id="alice", conversation_id="c1", data_dir=str(data), checkpoint_url=""
    ) as runner:
        runner.run(S1)
        plan = runner.resume(ANSWERS[500]).plan
    report = next(s for s in plan["steps"] if s["agentName"] == "report")
    data_id = report["result"]["context"]["data_id"]
    assert data_id and data_id.startswith("store://")

    memory = BlockMemory(data / "memory", env_embeddings())
    try:
        with sqlite3.connect(data / "memory" / "memory.sqlite3") as db:
            owners = {row[0] for row in db.execute("SELECT ns FROM blobs")}
        assert None not in owners and "" not in owners  # every blob has an owner

        def load(namespace: str, ref: str) -> object:
            tool = {t.name: t for t in make_memory_tools(memory, namespace)}["load"]
            return tool.invoke({"name": "load", "args": {"data_id": ref}, "id": "c", "type": "tool_call"})

        mallory = memory.scope("report", "mallory", "c1")  # same conversation id, another user
        assert load(mallory, data_id).status == "error"
        colleague = memory.scope("knowledge", "alice", "c1")  # alice's other agent, same conversation
        assert "光伏" in load(colleague, data_id).content

        from memory.offload import OwnerRequiredError

        with pytest.raises(OwnerRequiredError):
            memory.offload("无主内容")
        legacy = "0123456789abcdef0123456789abcdef"  # a blob stored before owners were required
        with sqlite3.connect(data / "memory" / "memory.sqlite3") as db:
            db.execute(
                "INSERT INTO blobs(id, ns, content, created_at) VALUES(?, NULL, '旧报告', 0)", (legacy,)
            )
        assert load(mallory, f"store://{legacy}").status == "error"
    finally:
        memory.close()
