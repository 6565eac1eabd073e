"""SQLite persistence of the memory layer: namespaces, messages, blocks, offloaded blobs, long-term facts."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
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

try:
    import fcntl
except ImportError:  # not on POSIX: SQLite's own busy handler alone orders the writers
    fcntl = None  # type: ignore[assignment]


class FileTurn:
    """Whose turn it is to use a file shared by processes: an advisory lock on a side file.

    SQLite makes a writer that finds the file locked sleep and retry, sleeping longer each time
    (up to 100 ms), so under steady writes from two processes a waiting transaction often sleeps
    well past the moment the lock came free — and while it waits, its process's other threads
    queue behind it. Chroma's bindings wait the same way while holding the GIL, which stops every
    thread of the process. Callers that take their turn here first wait at most a couple of
    milliseconds longer than needed, without the GIL. The files' own locks still guard the data:
    a user that does not take turns here, or a file system without locks, only falls back to
    their own waiting.
    """

    def __init__(self, path: str, timeout: float) -> None:
        self.timeout = timeout
        self._fd = -1
        self._threads = threading.Lock()  # one flock per process at a time (they share the fd)
        if fcntl is not None:
            try:
                self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:  # a read-only directory: the file's own lock decides
                self._fd = -1

    @contextmanager
    def hold(self, exclusive: bool = True) -> Iterator[None]:
        """Wait for the turn (up to the timeout; after it the file's own lock decides), then run."""
        if self._fd < 0:
            yield
            return
        with self._threads:
            held = self._take(fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                if held:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _take(self, mode: int) -> bool:
        deadline = time.monotonic() + self.timeout
        pause = 0.0002
        while True:
            try:
                fcntl.flock(self._fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(pause)  # without the GIL
                pause = min(pause * 2, 0.002)
            except OSError:  # no advisory locks here (some network file systems)
                return False

    def close(self) -> None:
        """Close the side file."""
        with self._threads:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


BLOCK_COLUMNS = (
    "ns block_id seq kind todo_id block_type keywords core_semantic create_time data_ids message_ids "
    "text terms tags created_at last_at vec extra pvecs"
).split()
_JSON_COLUMNS = {"keywords", "data_ids", "message_ids", "terms", "tags", "extra"}


class Store:
    """One SQLite write connection shared by threads behind a lock, and a pool of read connections.

    Writes go through `transaction()`: they take the database write lock when they start
    (`BEGIN IMMEDIATE`, waiting up to `busy_timeout` seconds for another process's), so what a
    transaction reads is still true when it commits. Reads outside a transaction (`query`,
    `snapshot()`) run on their own connections: in WAL mode they never wait for a writer, so a
    thread reading one conversation's memory does not queue behind another's write — nor, when
    several processes share the file, behind the other process's write lock. `data_version()`
    tells whether anything (another thread's write or another process's) has committed since a
    number it returned before.
    """

    def __init__(self, path: Path, busy_timeout: float = 30.0) -> None:
        self.path = path
        self._timeout = busy_timeout
        self._conn = self._connect()
        self._lock = threading.RLock()
        self._depth = 0
        self._writer = 0  # the thread inside `transaction()`
        self._after: list[Callable[[], None]] = []  # what the open transaction runs once committed
        self._idle: list[sqlite3.Connection] = []  # read connections not in use
        self._readers: list[sqlite3.Connection] = []  # every read connection (closed by close())
        self._pool_lock = threading.Lock()
        self._mine = threading.local()  # .snapshot: the read connection of this thread's snapshot
        self._version = self._connect()  # never writes: its data_version moves with every commit
        self._version_lock = threading.Lock()
        self._turn = FileTurn(f"{path}-writer", busy_timeout)
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

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None, timeout=self._timeout
        )

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
        """Close the connections."""
        with self._lock, self._pool_lock:
            self._conn.close()
            self._version.close()
            self._turn.close()
            for conn in self._readers:
                conn.close()
            self._readers.clear()
            self._idle.clear()

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        """A read connection of the pool, for this thread alone until the block ends."""
        with self._pool_lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only=ON")
            with self._pool_lock:
                self._readers.append(conn)
        try:
            yield conn
        finally:
            if conn.in_transaction:  # an error inside a snapshot
                conn.execute("ROLLBACK")
            with self._pool_lock:
                self._idle.append(conn)

    def _in_transaction(self) -> bool:
        return self._depth > 0 and self._writer == threading.get_ident()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Make this thread's reads in the block see one committed state of the file.

        Inside this thread's `transaction()` it changes nothing (the transaction is one state).
        """
        if self._in_transaction() or getattr(self._mine, "snapshot", None) is not None:
            yield
            return
        with self._reader() as conn:
            conn.execute("BEGIN")
            self._mine.snapshot = conn
            try:
                yield
            finally:
                self._mine.snapshot = None
                conn.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run statements atomically, holding the database write lock from the start.

        Re-entrant: a transaction opened inside another (same thread) joins it and commits with it.
        What `after_commit` queued runs once the outermost one has committed, after the lock is
        released; its first error is raised from here (the rows stay committed).
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            with self._turn.hold():
                self._conn.execute("BEGIN IMMEDIATE")
                self._depth, self._writer = 1, threading.get_ident()
                try:
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    # SQLite has already rolled back after some errors (a full disk): a second
                    # ROLLBACK would fail with "no transaction is active" and hide the error.
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                finally:
                    self._depth, self._writer = 0, 0
                    after, self._after = self._after, []
        failed: BaseException | None = None
        for action in after:  # committed (an error above skips this): the lock is free again
            try:
                action()
            except Exception as error:  # the others still run; the first error is the one raised
                failed = failed or error
        if failed is not None:
            raise failed

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run `action` once this thread's open transaction commits, outside the write lock.

        For work that follows from the rows but need not hold every other writer back while it
        runs (the block memory's Chroma upserts: a network round trip to a Chroma server). Dropped
        if the transaction rolls back; run at once when this thread has no transaction open.
        """
        if self._in_transaction():
            self._after.append(action)
        else:
            action()

    def data_version(self) -> int:
        """A number that changes whenever a write to the file commits (any thread, any process).

        Compare only numbers returned by this method: read it before the rows it stands for.
        """
        with self._version_lock:
            return int(self._version.execute("PRAGMA data_version").fetchone()[0])

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        """Fetch all rows of a read statement.

        Inside this thread's transaction it reads the transaction's own state; otherwise the
        latest committed one (or the state of this thread's `snapshot()`).
        """
        if self._in_transaction():
            with self._lock:
                return self._conn.execute(sql, tuple(params)).fetchall()
        mine = getattr(self._mine, "snapshot", None)
        if mine is not None:
            return mine.execute(sql, tuple(params)).fetchall()
        with self._reader() as conn:
            return conn.execute(sql, tuple(params)).fetchall()

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
