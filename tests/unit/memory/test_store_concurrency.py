"""Memory's SQLite and Chroma under concurrent turns and processes: who waits for whom.

A server runs several turns per process and, with `--processes`, several processes on one data
dir. Reading one conversation's memory must not queue behind another conversation's write (nor
behind another process's write lock), and waiting for another process must not stop the other
threads of this one (Chroma's bindings hold the GIL while they wait inside).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory._store import Store


def _finishes(call, seconds: float = 5.0) -> bool:  # noqa: ANN001 - any zero-argument callable
    """Run `call` in a thread; True when it returned within `seconds`."""
    done = threading.Event()
    threading.Thread(target=lambda: (call(), done.set()), daemon=True).start()
    return done.wait(seconds)


def test_reads_do_not_wait_for_another_threads_open_transaction(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.sqlite3")
    with store.transaction() as conn:
        conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('a', 'ns', 'old', 0)")
    inside, leave = threading.Event(), threading.Event()

    def writer() -> None:
        with store.transaction() as conn:
            conn.execute("UPDATE blobs SET content='new' WHERE id='a'")
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert inside.wait(5)
        seen: list = []
        assert _finishes(lambda: seen.append(store.query("SELECT content FROM blobs WHERE id='a'")))
        assert seen == [[("old",)]]  # the committed state, not the open transaction's
    finally:
        leave.set()
        thread.join()
    assert store.query("SELECT content FROM blobs WHERE id='a'") == [("new",)]
    store.close()


def test_a_transactions_own_reads_see_its_writes(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.sqlite3")
    with store.transaction() as conn:
        conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('a', 'ns', 'x', 0)")
        assert store.query("SELECT count(*) FROM blobs") == [(1,)]
        with store.snapshot():  # a snapshot inside the transaction is the transaction
            assert store.query("SELECT count(*) FROM blobs") == [(1,)]
    store.close()


def test_data_version_moves_with_every_commit_from_any_connection(tmp_path: Path) -> None:
    first, second = Store(tmp_path / "m.sqlite3"), Store(tmp_path / "m.sqlite3")
    v0 = first.data_version()
    with first.transaction() as conn:  # this store's own write
        conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('a', 'ns', 'x', 0)")
    v1 = first.data_version()
    with second.transaction() as conn:  # another store's (another process's) write
        conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('b', 'ns', 'y', 0)")
    v2 = first.data_version()
    assert v0 != v1 != v2
    assert first.data_version() == v2  # and stays put without writes
    first.close()
    second.close()


def _conversation(n: int) -> list:
    return [
        m
        for i in range(n)
        for m in (
            HumanMessage(f"第{i}个问题：杭州的光伏电价是多少？", id=f"h{i}"),
            AIMessage(f"第{i}个回答：工商业电价约0.72元/度。", id=f"a{i}"),
        )
    ]


def test_catching_up_after_another_process_wrote_does_not_need_the_write_lock(tmp_path: Path) -> None:
    embeddings = DeterministicFakeEmbedding(size=8)
    mine = BlockMemory(tmp_path, embeddings=embeddings)
    other = BlockMemory(tmp_path, embeddings=embeddings)  # another process on the same data dir
    ns = mine.scope("pv_calc", "u1", "c1")
    mine.add_messages(ns, _conversation(6))
    assert mine.search(ns, "电价", k=3)
    other.add_messages(other.scope("pv_calc", "u1", "c1"), _conversation(9)[12:])  # moves the version on
    locker = Store(tmp_path / "memory.sqlite3")
    with locker.transaction():  # a third writer holds the write lock meanwhile
        hits: list = []
        assert _finishes(lambda: hits.append(mine.search(ns, "第7个问题", k=3)))
    assert hits and any("h7" in h.message_ids for h in hits[0])  # and the other process's rows are seen
    for memory in (mine, other):
        memory.close()
    locker.close()


def test_waiting_for_another_processs_chroma_write_leaves_this_process_running(tmp_path: Path) -> None:
    """Another process inside a Chroma write: this one's upsert waits without stopping its threads."""
    memory = BlockMemory(tmp_path, embeddings=DeterministicFakeEmbedding(size=8))
    ns = memory.scope("pv_calc", "u1", "c1")
    memory.add_messages(ns, _conversation(2))  # Chroma open, the collection made
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import fcntl, sqlite3, time
                turn = open({str(tmp_path / "chroma")!r} + ".access", "a")
                fcntl.flock(turn, fcntl.LOCK_EX)
                db = sqlite3.connect({str(tmp_path / "chroma" / "chroma.sqlite3")!r}, isolation_level=None)
                db.execute("BEGIN IMMEDIATE")
                print("held", flush=True)
                time.sleep(1.5)
                db.execute("COMMIT")
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    count, stop = [0], threading.Event()

    def spin() -> None:
        while not stop.is_set():
            count[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.2)
    before = count[0] / 0.2
    started = time.perf_counter()
    memory.add_messages(ns, _conversation(4)[4:])  # new blocks: a Chroma upsert behind the holder
    waited = time.perf_counter() - started
    during = count[0]
    stop.set()
    spinner.join()
    holder.wait(10)
    holder.stdout.close()
    assert waited > 0.5, "the upsert did not wait for the other process: the test shows nothing"
    # Inside Chroma's own wait the spinner made < 1 % of its progress; taking turns outside it,
    # without the GIL, leaves it well over half (measured ~100 %).
    assert (during - before * 0.2) / waited > 0.3 * before
    memory.close()


def test_after_commit_runs_once_committed_outside_the_write_lock(tmp_path: Path) -> None:
    store = Store(tmp_path / "m.sqlite3")
    seen: list[str] = []

    def another_writer() -> None:  # must get the write lock while the action runs
        def write() -> None:
            with store.transaction() as conn:
                conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('b', 'ns', 'x', 0)")

        seen.append("free" if _finishes(write) else "held")

    with store.transaction() as conn:
        conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('a', 'ns', 'x', 0)")
        with store.transaction():  # joined: the action waits for the outermost commit
            store.after_commit(another_writer)
        assert seen == []
    assert seen == ["free"]
    assert store.query("SELECT id FROM blobs ORDER BY id") == [("a",), ("b",)]

    try:  # rolled back: the action is dropped
        with store.transaction() as conn:
            conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('c', 'ns', 'x', 0)")
            store.after_commit(lambda: seen.append("after a rollback"))
            raise KeyError("boom")
    except KeyError:
        pass
    store.after_commit(lambda: seen.append("no transaction: at once"))
    assert seen == ["free", "no transaction: at once"]

    def fails() -> None:
        raise OSError("vector store down")

    try:  # every action runs; the first error is raised, the rows stay committed
        with store.transaction() as conn:
            conn.execute("INSERT INTO blobs(id, ns, content, created_at) VALUES('d', 'ns', 'x', 0)")
            store.after_commit(fails)
            store.after_commit(lambda: seen.append("still ran"))
    except OSError as error:
        assert str(error) == "vector store down"
    else:
        raise AssertionError("the action's error was not raised")
    assert seen[-1] == "still ran"
    assert store.query("SELECT count(*) FROM blobs WHERE id='d'") == [(1,)]
    store.close()


def test_a_slow_vector_write_does_not_hold_other_conversations_writes_back(tmp_path: Path) -> None:
    """A Chroma upsert (an HTTP round trip with a Chroma server) runs after the rows commit."""
    memory = BlockMemory(tmp_path, embeddings=DeterministicFakeEmbedding(size=8))
    slow, other = memory.scope("pv_calc", "u1", "c1"), memory.scope("pv_calc", "u2", "c2")
    memory.add_messages(slow, _conversation(2))
    memory.add_messages(other, _conversation(2))
    real_upsert, inside, leave = memory._vectors.upsert, threading.Event(), threading.Event()

    def upsert(namespace: str, items) -> None:  # noqa: ANN001
        if namespace == slow:
            inside.set()
            leave.wait(10)
        real_upsert(namespace, items)

    memory._vectors.upsert = upsert  # type: ignore[method-assign]
    writer = threading.Thread(target=lambda: memory.add_messages(slow, _conversation(4)[4:]))
    writer.start()
    try:
        assert inside.wait(5), "no vector write for the slow conversation: the test shows nothing"
        assert _finishes(lambda: memory.add_messages(other, _conversation(4)[4:]))
    finally:
        leave.set()
        writer.join()
    assert [h.message_ids for h in memory.search(slow, "第3个问题", k=1)][0]
    memory.close()


def _chroma_vectors(memory: BlockMemory, ns: str) -> dict[str, list[float]]:
    got = memory._vectors._get(ns, 8).get(include=["embeddings", "metadatas"])
    return {
        m["block_id"]: [round(x, 5) for x in e]
        for m, e in zip(got["metadatas"], got["embeddings"], strict=True)
    }


def test_a_failed_vector_write_keeps_the_rows_and_is_sent_again_on_next_use(tmp_path: Path) -> None:
    from memory._state import decode_vec

    memory = BlockMemory(tmp_path, embeddings=DeterministicFakeEmbedding(size=8))
    ns = memory.scope("pv_calc", "u1", "c1")
    memory.add_messages(ns, _conversation(1))
    real_upsert = memory._vectors.upsert

    def down(namespace: str, items) -> None:  # noqa: ANN001, ARG001
        raise ConnectionError("Chroma server unreachable")

    memory._vectors.upsert = down  # type: ignore[method-assign]
    try:
        memory.add_messages(ns, _conversation(2)[2:])  # grows the one block: its vector changes
    except ConnectionError:
        pass
    else:
        raise AssertionError("the failed vector write was not reported")
    memory._vectors.upsert = real_upsert  # type: ignore[method-assign]
    assert [m.id for m in memory.messages(ns)] == [m.id for m in _conversation(2)]  # rows kept
    stored = {
        b: [round(x, 5) for x in decode_vec(v) or []]
        for b, v in memory._store.query("SELECT block_id, vec FROM blocks WHERE ns=?", (ns,))
    }
    old = _chroma_vectors(memory, ns)
    assert old.keys() == stored.keys() == {"b_main_001"} and old != stored  # as many, one stale
    hits = memory.search(ns, "第1个回答", k=2)  # the next use re-sends every vector from SQLite
    assert hits and "a1" in hits[0].message_ids
    assert _chroma_vectors(memory, ns) == stored
    memory.close()
