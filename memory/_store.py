"""SQLite persistence of the memory layer: namespaces, messages, blocks, offloaded blobs, long-term facts."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS namespaces(
    ns TEXT PRIMARY KEY, agent TEXT, user_id TEXT, conversation_id TEXT);
CREATE TABLE IF NOT EXISTS messages(
    ns TEXT NOT NULL, seq INTEGER NOT NULL, msg_id TEXT NOT NULL, created_at REAL NOT NULL,
    tokens INTEGER NOT NULL, todo_id TEXT NOT NULL, tags TEXT NOT NULL, block_id TEXT,
    data TEXT NOT NULL, PRIMARY KEY(ns, seq));
CREATE INDEX IF NOT EXISTS messages_by_block ON messages(ns, block_id);
CREATE INDEX IF NOT EXISTS messages_by_id ON messages(ns, msg_id);
CREATE TABLE IF NOT EXISTS blocks(
    ns TEXT NOT NULL, block_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    todo_id TEXT NOT NULL, block_type TEXT NOT NULL, keywords TEXT NOT NULL,
    core_semantic TEXT NOT NULL, create_time TEXT NOT NULL, data_ids TEXT NOT NULL,
    message_ids TEXT NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL, tags TEXT NOT NULL,
    created_at REAL NOT NULL, last_at REAL NOT NULL, vec BLOB, extra TEXT NOT NULL, pvecs BLOB,
    PRIMARY KEY(ns, block_id));
CREATE INDEX IF NOT EXISTS blocks_by_seq ON blocks(ns, kind, seq);
CREATE TABLE IF NOT EXISTS summaries(
    ns TEXT NOT NULL, summary_id TEXT NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
    members TEXT NOT NULL, text TEXT NOT NULL, created_at REAL NOT NULL, last_at REAL NOT NULL,
    PRIMARY KEY(ns, summary_id));
CREATE TABLE IF NOT EXISTS blobs(
    id TEXT PRIMARY KEY, ns TEXT, content TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS facts(
    user_id TEXT NOT NULL, key TEXT NOT NULL, fact_id TEXT NOT NULL, value TEXT NOT NULL,
    text TEXT NOT NULL, said TEXT NOT NULL, scope TEXT NOT NULL, conversation_id TEXT NOT NULL,
    message_id TEXT NOT NULL, judged_by TEXT NOT NULL, importance REAL NOT NULL,
    created_at REAL NOT NULL, PRIMARY KEY(user_id, key));
"""

BLOCK_COLUMNS = (
    "ns block_id seq kind todo_id block_type keywords core_semantic create_time data_ids message_ids "
    "text terms tags created_at last_at vec extra pvecs"
).split()
_JSON_COLUMNS = {"keywords", "data_ids", "message_ids", "terms", "tags", "extra"}


class Store:
    """One SQLite connection shared by threads behind a lock (WAL, so readers are cheap).

    Several processes may share the file: writes take the database write lock when their
    transaction starts (`BEGIN IMMEDIATE`, waiting up to `busy_timeout` seconds for another
    process's), so what a transaction reads is still true when it commits; `data_version()` tells
    a process whether another one has committed since it last looked.
    """

    def __init__(self, path: Path, busy_timeout: float = 30.0) -> None:
        self.path = path
        self._conn = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None, timeout=busy_timeout
        )
        self._lock = threading.RLock()
        self._depth = 0
        with self._lock:
            self._wal(busy_timeout)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
            columns = {r[1] for r in self._conn.execute("PRAGMA table_info(blocks)")}
            if "pvecs" not in columns:  # a store written before closure vectors were kept
                try:
                    self._conn.execute("ALTER TABLE blocks ADD COLUMN pvecs BLOB")
                except sqlite3.OperationalError:  # another process added it first
                    columns = {r[1] for r in self._conn.execute("PRAGMA table_info(blocks)")}
                    if "pvecs" not in columns:
                        raise

    def _wal(self, busy_timeout: float) -> None:
        """Switch to WAL, waiting out another process doing the same.

        Two processes opening a new store at once: SQLite answers the second one's journal-mode
        change with "database is locked" at once, without its busy handler, so it is retried here.
        """
        deadline = time.monotonic() + busy_timeout
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run statements atomically, holding the database write lock from the start.

        Re-entrant: a transaction opened inside another (same thread) joins it and commits with it.
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            self._conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite has already rolled back after some errors (a full disk): a second ROLLBACK
                # would fail with "no transaction is active" and hide the error that matters.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0

    def data_version(self) -> int:
        """A number that changes when another connection (another process) commits to the file."""
        with self._lock:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        """Fetch all rows of a read statement."""
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    # -- blocks -------------------------------------------------------------------------------
    def put_block(self, conn: sqlite3.Connection, row: dict[str, Any]) -> None:
        """Insert or replace one block row (JSON columns are encoded here)."""
        values = [
            json.dumps(row[c], ensure_ascii=False) if c in _JSON_COLUMNS else row[c] for c in BLOCK_COLUMNS
        ]
        marks = ",".join("?" * len(BLOCK_COLUMNS))
        conn.execute(f"INSERT OR REPLACE INTO blocks({','.join(BLOCK_COLUMNS)}) VALUES({marks})", values)

    def blocks(
        self,
        where: str,
        params: Iterable[Any] = (),
        order: str = "ns, seq",
        columns: Iterable[str] = BLOCK_COLUMNS,
    ) -> list[dict]:
        """Block rows matching `where` (decoded), in `order`."""
        cols = list(columns)
        rows = self.query(f"SELECT {','.join(cols)} FROM blocks WHERE {where} ORDER BY {order}", params)
        return [
            {c: (json.loads(v) if c in _JSON_COLUMNS else v) for c, v in zip(cols, row, strict=True)}
            for row in rows
        ]
