import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from memory import BlockMemory, UnknownDataIdError


def test_messages_round_trip_faithfully(memory: BlockMemory):
    msgs = [
        HumanMessage("测算 500kW", id="h1", additional_kwargs={"created_at": "2025-01-01T10:00:00"}),
        AIMessage("", id="a1", tool_calls=[{"name": "pv_calc", "args": {"kw": 500}, "id": "call_9"}]),
        ToolMessage(
            "IRR 8%",
            id="t1",
            tool_call_id="call_9",
            name="pv_calc",
            status="error",
            additional_kwargs={"structured": {"irr": 0.08, "rows": [1, 2]}},
        ),
        AIMessage("IRR 为 8%。", id="a2", name="pv"),
    ]
    memory.add_messages("a_u_c", msgs)
    back = memory.messages("a_u_c")
    assert [type(m) for m in back] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert [m.id for m in back] == ["h1", "a1", "t1", "a2"]
    assert back[1].tool_calls[0]["args"] == {"kw": 500}
    tool = back[2]
    assert isinstance(tool, ToolMessage)
    assert (tool.tool_call_id, tool.name, tool.status) == ("call_9", "pv_calc", "error")
    assert tool.additional_kwargs["structured"] == {"irr": 0.08, "rows": [1, 2]}
    assert back[3].name == "pv"
    assert [m.id for m in memory.messages("a_u_c", limit=2)] == ["t1", "a2"]


def test_reopen_restores_messages_blocks_and_chunking_state(tmp_path):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    emb = DeterministicFakeEmbedding(size=16)
    first = BlockMemory(tmp_path, emb)
    first.add_messages("a_u_c", [HumanMessage("电价 0.85 元"), AIMessage("记下了")])
    first.add_messages("a_u_c", [HumanMessage("还有补贴吗")])
    first.close()
    again = BlockMemory(tmp_path, emb)
    again.add_messages("a_u_c", [AIMessage("有，0.03 元/度")])
    assert [m.content for m in again.messages("a_u_c")] == [
        "电价 0.85 元",
        "记下了",
        "还有补贴吗",
        "有，0.03 元/度",
    ]
    hits = again.search("a_u_c", "补贴")
    assert {h.block_id for h in hits} == {"b_main_001"} and hits[0].text == "user: 还有补贴吗"
    assert len(again.block_messages("a_u_c", "b_main_001")) == 4


def test_other_users_and_conversations_never_leak(memory: BlockMemory):
    alice = memory.scope("pv_calc", "alice", "c1")
    alice2 = memory.scope("pv_calc", "alice", "c2")
    bob = memory.scope("pv_calc", "bob", "c1")
    secret = "x" * 9000
    memory.add_messages(
        alice,
        [
            HumanMessage("查一下银行账号 6222 的流水"),
            AIMessage("", tool_calls=[{"name": "read", "args": {}, "id": "r1"}]),
            ToolMessage(secret + " 6222", tool_call_id="r1", name="read"),
            AIMessage("好的 6222"),
        ],
    )
    ref = memory.list_blocks(alice)[0]["data_ids"][0]
    for ns in (bob, alice2):
        assert memory.search(ns, "银行账号 6222") == []
        assert memory.list_blocks(ns) == []
        with pytest.raises(UnknownDataIdError):
            memory.load(ref, namespace=ns)
    assert memory.load(ref, 0, 3, namespace=alice) == "xxx"
    with pytest.raises(UnknownDataIdError, match="32 hex"):
        memory.load("store://../memory.sqlite3")
    with pytest.raises(UnknownDataIdError, match="does not exist"):
        memory.load("store://" + "0" * 32)


def test_long_term_facts_follow_the_user_not_the_conversation(memory: BlockMemory):
    c1 = memory.scope("pv_calc", "alice", "c1")
    c2 = memory.scope("pv_calc", "alice", "c2")
    bob = memory.scope("pv_calc", "bob", "c9")
    memory.add_messages(c1, [HumanMessage("请记住：我偏好单晶硅组件"), AIMessage("好的，记住了")])
    memory.add_messages(
        c1, [HumanMessage("屋顶朝南", additional_kwargs={"tags": ["critical"]}), AIMessage("收到")]
    )
    hits = memory.search(c2, "单晶硅组件")
    assert hits and hits[0].metadata["tier"] == "long_term"
    assert hits[0].metadata["source_namespace"] == c1
    assert memory.search(bob, "单晶硅组件") == []
    assert all(h.metadata["tier"] == "short_term" for h in memory.search(c1, "单晶硅组件"))


def test_forgetting_drops_only_faded_facts(memory: BlockMemory):
    c1 = memory.scope("a", "u", "c1")
    memory.add_messages(
        c1,
        [
            HumanMessage("请记住我喜欢蓝色", additional_kwargs={"created_at": "2020-01-01T00:00:00"}),
            AIMessage("好"),
        ],
    )
    memory.add_messages(
        c1,
        [
            HumanMessage(
                "关键：预算 100 万",
                additional_kwargs={"tags": ["critical"], "created_at": "2024-12-01T00:00:00"},
            ),
            AIMessage("好"),
        ],
    )
    from datetime import datetime

    now = datetime(2025, 1, 1).timestamp()
    memory.forget("u", now=now)
    kept = [f["core_semantic"] for f in memory.long_term("u")]
    assert len(kept) == 1 and "预算" in kept[0]


def test_system_messages_and_settings_errors(tmp_path):
    with pytest.raises(TypeError, match="merge_threshold"):
        BlockMemory(tmp_path, None, merge_treshold=0.7)
    mem = BlockMemory(
        tmp_path / "x", __import__("langchain_core.embeddings").embeddings.DeterministicFakeEmbedding(size=8)
    )
    with pytest.raises(ValueError, match="reserved"):
        mem.add_messages("longterm::u", [SystemMessage("x")])


def test_lost_vector_store_is_refilled_from_sqlite(tmp_path):
    import shutil

    from langchain_core.embeddings import DeterministicFakeEmbedding

    emb = DeterministicFakeEmbedding(size=16)
    memory = BlockMemory(tmp_path, emb)
    memory.add_messages(
        "a_u_c", [HumanMessage("roof 3200"), AIMessage("ok"), HumanMessage("loan"), AIMessage("ok")]
    )
    block_ids = [b["block_id"] for b in memory.list_blocks("a_u_c")]
    memory.close()
    (tmp_path / "moved").mkdir()
    shutil.copy(tmp_path / "memory.sqlite3", tmp_path / "moved" / "memory.sqlite3")  # without chroma/
    again = BlockMemory(tmp_path / "moved", emb)
    vector = emb.embed_query("roof 3200")
    assert again._vectors.query(vector, ["a_u_c"], 8) == []  # the new Chroma dir is empty …
    again.search("a_u_c", "roof")  # … until the namespace is first used
    assert sorted(b for _, b, _ in again._vectors.query(vector, ["a_u_c"], 8)) == sorted(block_ids)
    again.close()


def test_vector_batches_larger_than_chromas_maximum_are_split(tmp_path):
    from memory.vectors import VectorIndex, chroma_client

    client = chroma_client(tmp_path / "chroma")
    index = VectorIndex(client, DeterministicFakeEmbedding(size=4))
    n = client.get_max_batch_size() + 7  # one add_messages call may close thousands of blocks
    index.upsert("a_u_c", [(f"b_{i}", "main", [1.0, float(i % 5), 0.0, 1.0]) for i in range(n)])
    assert index.count("a_u_c", 4) == n


def test_counting_or_searching_a_namespace_without_vectors_creates_no_collection(tmp_path):
    from memory.vectors import VectorIndex, chroma_client

    client = chroma_client(tmp_path / "chroma")
    index = VectorIndex(client, DeterministicFakeEmbedding(size=4))
    assert index.count("a_u_empty", 4) == 0
    assert index.query([1.0, 0.0, 0.0, 1.0], ["a_u_empty"], 5) == []
    assert client.list_collections() == []  # reading made nothing
    index.upsert("a_u_full", [("b_1", "main", [1.0, 0.0, 0.0, 1.0])])
    assert index.count("a_u_full", 4) == 1
    assert index.count("a_u_empty", 4) == 0
    assert len(client.list_collections()) == 1
    # another instance on the same directory sees the existing collection through the read-only path
    other = VectorIndex(client, DeterministicFakeEmbedding(size=4))
    assert other.count("a_u_full", 4) == 1
    assert [b for _, b, _ in other.query([1.0, 0.0, 0.0, 1.0], ["a_u_full", "a_u_empty"], 5)] == ["b_1"]
    assert len(client.list_collections()) == 1
