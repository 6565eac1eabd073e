from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory import BlockMemory


def _at(minute: float) -> dict:
    return {"created_at": f"2025-01-01T10:{int(minute):02d}:{int(minute % 1 * 60):02d}"}


def tool_closure(start: float, call_id: str, result: str = "ok") -> list:
    return [
        HumanMessage("用 read 工具读取 data.txt", additional_kwargs=_at(start)),
        AIMessage(
            "",
            tool_calls=[{"name": "read", "args": {"path": "data.txt"}, "id": call_id}],
            additional_kwargs=_at(start + 0.1),
        ),
        ToolMessage(result, tool_call_id=call_id, name="read", additional_kwargs=_at(start + 0.2)),
        AIMessage("已读取 data.txt。", additional_kwargs=_at(start + 0.3)),
    ]


def test_tool_closure_is_one_block_with_design_metadata(memory: BlockMemory):
    blocks = memory.add_messages("a_u_c", tool_closure(0, "call_1"))
    assert len(blocks) == 1
    meta = memory.list_blocks("a_u_c")[0]
    assert list(meta) == [
        "block_id",
        "todo_id",
        "block_type",
        "keywords",
        "core_semantic",
        "create_time",
        "data_ids",
    ]
    assert meta["block_id"] == "b_main_001"
    assert meta["block_type"] == "tool_call"
    assert meta["create_time"] == "2025-01-01 10:00:00"
    assert "data.txt" in meta["keywords"]
    assert len(meta["core_semantic"]) <= 50


def test_closure_is_never_split_even_one_message_at_a_time(memory: BlockMemory):
    msgs = tool_closure(0, "call_1") + tool_closure(1, "call_2")
    for m in msgs:
        memory.add_messages("a_u_c", [m])
    memory.flush("a_u_c")
    for meta in memory.list_blocks("a_u_c"):
        ids = memory.block_messages("a_u_c", meta["block_id"])
        calls = {c["id"] for m in ids if isinstance(m, AIMessage) for c in m.tool_calls}
        results = {m.tool_call_id for m in ids if isinstance(m, ToolMessage)}
        assert calls == results


def test_time_gap_of_five_minutes_starts_a_new_block(memory: BlockMemory):
    memory.add_messages(
        "a_u_c",
        [HumanMessage("你好", additional_kwargs=_at(0)), AIMessage("你好！", additional_kwargs=_at(0.1))],
    )
    memory.add_messages(
        "a_u_c",
        [HumanMessage("在吗", additional_kwargs=_at(6)), AIMessage("在的", additional_kwargs=_at(6.1))],
    )
    assert [b["block_id"] for b in memory.list_blocks("a_u_c")] == ["b_main_001", "b_main_002"]


def test_short_blocks_grow_to_three_messages_and_stop_at_eight(memory: BlockMemory):
    turns = []
    for i in range(12):
        turns += [
            HumanMessage(f"question {i} about topic{i}", additional_kwargs=_at(i * 0.2)),
            AIMessage(f"answer {i}", additional_kwargs=_at(i * 0.2 + 0.1)),
        ]
    memory.add_messages("a_u_c", turns)
    sizes = [len(memory.block_messages("a_u_c", b["block_id"])) for b in memory.list_blocks("a_u_c")]
    assert sum(sizes) == 24
    assert all(3 <= s <= 8 for s in sizes)


def test_todo_ids_separate_blocks_and_filter_listing(memory: BlockMemory):
    memory.add_messages("a_u_c", tool_closure(0, "c1"), todo_id="todo001")
    memory.add_messages("a_u_c", tool_closure(0.5, "c2"), todo_id="todo002")
    assert [b["block_id"] for b in memory.list_blocks("a_u_c", todo_id="todo002")] == ["b_todo002_002"]


def test_big_tool_result_is_offloaded_and_paged(memory: BlockMemory):
    big = "第" + "光伏发电量数据 " * 3000
    memory.add_messages("a_u_c", tool_closure(0, "c1", result=big))
    stored = [m for m in memory.messages("a_u_c") if isinstance(m, ToolMessage)][0]
    ref = stored.additional_kwargs["offloaded"]
    assert ref.startswith("store://") and ref in stored.content
    assert len(stored.content) < 1000
    assert memory.list_blocks("a_u_c")[0]["data_ids"] == [ref]
    assert memory.load(ref) == big
    assert memory.load(ref, offset=1, limit=4) == "光伏发电"
    assert memory.load(ref.removeprefix("store://"), 0, 1) == "第"


class _WatchedEmbeddings(DeterministicFakeEmbedding):
    """Records, for every text embedded, whether the memory store held its write transaction."""

    store: object = None
    calls: list = []

    def embed_documents(self, texts):
        self.calls.append((list(texts), bool(getattr(self.store, "_depth", 0))))
        return super().embed_documents(texts)


def test_blocks_are_embedded_before_the_write_lock_is_taken(tmp_path):
    # Embedding under the database write lock made every other turn (and server process) that
    # writes memory wait for the model; the vectors are now computed before the transaction.
    emb = _WatchedEmbeddings(size=16, calls=[])
    # Never merge by similarity: the two closures differ in one message only (their vectors are close).
    mem = BlockMemory(tmp_path / "mem", emb, merge_threshold=1.01)
    emb.store = mem._store
    try:
        mem.add_messages("a_u_c", tool_closure(0, "call_1"))
        mem.add_messages("a_u_c", tool_closure(5, "call_2", result="第二次"))
        assert emb.calls and not any(locked for _, locked in emb.calls), emb.calls
        assert [b["block_id"] for b in mem.list_blocks("a_u_c")] == ["b_main_001", "b_main_002"]
        assert mem.search("a_u_c", "第二次", k=1)[0].block_id == "b_main_002"
    finally:
        mem.close()


def test_a_foreseen_text_that_changes_is_embedded_under_the_lock_as_before(tmp_path):
    # A tool result long enough to be offloaded becomes a preview inside the transaction: the
    # forecast cannot know its text, so that piece is embedded there (correct, just not early).
    emb = _WatchedEmbeddings(size=16, calls=[])
    # Never merge by similarity: the two closures differ in one message only (their vectors are close).
    mem = BlockMemory(tmp_path / "mem", emb, merge_threshold=1.01)
    emb.store = mem._store
    try:
        mem.add_messages("a_u_c", tool_closure(0, "call_1", result="很长的结果 " * 4000))
        locked = [texts for texts, held in emb.calls if held]
        assert len(locked) == 1 and "store://" in locked[0][0]
        assert mem.list_blocks("a_u_c")[0]["data_ids"]
    finally:
        mem.close()
