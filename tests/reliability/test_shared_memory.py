"""Block memory shared by several processes (two `plangraph serve` on one data dir).

Before: each process numbered messages from its own cached counter, so the second writer of a
namespace failed with `UNIQUE constraint failed: messages.ns, messages.seq` (a 500 over HTTP).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory

ROOT = Path(__file__).resolve().parents[2]
NS = "pv_calc_u_c"

WRITER = textwrap.dedent(
    """
    import sys, time
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.messages import HumanMessage
    from memory import BlockMemory

    root, name, count, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    memory = BlockMemory(root, DeterministicFakeEmbedding(size=32))
    memory.scope("pv_calc", "u", "c")
    time.sleep(max(0.0, start - time.time()))
    for i in range(count):
        memory.add_messages("NS", [HumanMessage(f"{name} 第{i}条 装机容量{i}kW")])
    memory.close()
    """
).replace("NS", NS)


def _stored(root: Path) -> list[tuple[int, str]]:
    import sqlite3

    with sqlite3.connect(root / "memory.sqlite3") as db:
        rows = db.execute("SELECT seq, data FROM messages WHERE ns=? ORDER BY seq", (NS,)).fetchall()
    return [(seq, json.loads(data)["data"]["content"]) for seq, data in rows]


def test_two_instances_take_turns_on_one_namespace(tmp_path):
    """Two connections (as two processes have) appending in turn: no stale counter, nothing lost."""
    first = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=32))
    second = BlockMemory(tmp_path, DeterministicFakeEmbedding(size=32))
    try:
        for i in range(6):
            writer = first if i % 2 == 0 else second
            writer.add_messages(NS, [HumanMessage(f"消息{i}"), AIMessage(f"回答{i}")])
        assert [text for _, text in _stored(tmp_path)] == [
            t for i in range(6) for t in (f"消息{i}", f"回答{i}")
        ]
        assert [seq for seq, _ in _stored(tmp_path)] == list(range(12))
        # Each instance finds what the other wrote.
        hits = first.search(NS, "回答5")
        assert any("回答5" in hit.text for hit in hits)
    finally:
        first.close()
        second.close()


def test_two_processes_appending_to_one_namespace_at_once_lose_nothing(tmp_path):
    start = time.time() + 6  # both processes have imported everything by then
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), name, "40", str(start)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("甲", "乙")
    ]
    outputs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    stored = _stored(tmp_path)
    assert [seq for seq, _ in stored] == list(range(80))
    for name in ("甲", "乙"):
        mine = [text for _, text in stored if text.startswith(name)]
        assert mine == [f"{name} 第{i}条 装机容量{i}kW" for i in range(40)]  # all there, in order
