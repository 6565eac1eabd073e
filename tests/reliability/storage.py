"""Helpers for the storage-fault tests: a block memory on a data dir, and a simulated restart."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory import BlockMemory
from tests.support.services import env_embeddings

FACT = "the installed capacity of the rooftop plant is 500 kW"
BIG_RESULT = "year,cashflow\n" + "".join(f"{y},{y * 1234.5:.1f}\n" for y in range(4000))


def restart_chroma() -> None:
    """Forget Chroma's in-process client cache, as a new process would."""
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def filled_memory(root: Path) -> tuple[BlockMemory, str, str]:
    """A memory with one closed block and one offloaded tool result; returns (memory, ns, data id)."""
    memory = BlockMemory(root, env_embeddings())
    ns = memory.scope("pv_calc", "alice", "c1")
    memory.add_messages(
        ns,
        [
            HumanMessage(FACT),
            AIMessage("", tool_calls=[{"name": "cashflow", "args": {}, "id": "call_1"}]),
            ToolMessage(BIG_RESULT, tool_call_id="call_1", name="cashflow"),
            AIMessage("noted: installed capacity 500 kW"),
        ],
    )
    memory.flush(ns)
    (data_id,) = {d for b in memory.list_blocks(ns) for d in b["data_ids"]}
    return memory, ns, data_id


def hold_write_lock(db: Path, seconds: float) -> threading.Event:
    """Hold an exclusive write transaction on `db` from another connection for `seconds`.

    Returns an event that is set once the lock is held.
    """
    held = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        conn.execute("BEGIN EXCLUSIVE")
        held.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
        conn.close()

    threading.Thread(target=hold, daemon=True).start()
    assert held.wait(10)
    return held
