"""A small SQLite file shared by threads and processes: the plan store and the results index."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

__all__ = ["open_sqlite", "use_wal"]


def use_wal(db: sqlite3.Connection, timeout: float = 30.0) -> None:
    """Switch `db` to WAL with `synchronous=NORMAL`, waiting out another process doing the same.

    NORMAL: a commit is not flushed to disk on its own (the WAL is synced at checkpoints), as in
    block memory's store. A killed process loses nothing committed; an OS crash or power cut may
    lose the last commits (a resumed conversation redoes its last step; PostgreSQL checkpoints
    are the power-cut-proof choice). With FULL every commit waited for an fsync (4.2 ms per commit
    against 0.05 ms here) under the checkpointer's one lock per process: under steady load three
    serve processes' threads spent more time queued on that lock than any other.

    SQLite answers a journal-mode change that meets another connection's lock with "database is
    locked" at once, without its busy handler: two server processes opening a new store together
    failed a request with a 500 (3 processes × 60 new files: 11 failures before this retry).
    Block memory's store does the same in `memory._store.Store._wal`: memory imports nothing of
    the project, and importing the memory package here would cost every CLI start ~0.5 s.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def open_sqlite(path: str | Path, schema: str) -> sqlite3.Connection:
    """A connection to `path` (created with its folder) in WAL mode, with `schema` applied.

    One connection serves all threads (callers hold their own lock around it); other processes
    wait up to 30 s for a write lock.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, timeout=30)
    use_wal(db)
    with db:
        db.executescript(schema)
    return db
