"""Every SQLite file plangraph writes runs in WAL with synchronous=NORMAL (`tools.sqlite_file.use_wal`).

With SQLite's default FULL, each commit waits for an fsync (4.2 ms per commit on the CI disk
against 0.05 ms), and the checkpointer holds its one per-process lock meanwhile: under steady
HTTP load the server's threads queued there more than anywhere else. A killed process still
loses nothing committed (tests/reliability/kill_cli.py kills a run and resumes it).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory._store import Store
from plangraph.auth import SessionStore
from plangraph.checkpoint import open_checkpointer
from tools.plans.store import PlanStore
from tools.results import ResultsIndex

NORMAL = 1


def _modes(conn: sqlite3.Connection) -> tuple[str, int]:
    return conn.execute("PRAGMA journal_mode").fetchone()[0], conn.execute("PRAGMA synchronous").fetchone()[0]


def test_every_store_is_wal_without_an_fsync_per_commit(tmp_path: Path) -> None:
    with open_checkpointer(tmp_path / "cp", "") as saver:
        assert _modes(saver.conn) == ("wal", NORMAL)  # type: ignore[attr-defined]
    plans, results = PlanStore(tmp_path / "plans.sqlite3"), ResultsIndex(tmp_path / "results.sqlite")
    sessions, memory = SessionStore(tmp_path / "sessions.sqlite3"), Store(tmp_path / "memory.sqlite3")
    for conn in (plans._db, results._db, sessions._db, memory._conn):
        assert _modes(conn) == ("wal", NORMAL)
    memory.close()
