"""A small SQLite file shared by threads and processes: the plan store and the results index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["open_sqlite"]


def open_sqlite(path: str | Path, schema: str) -> sqlite3.Connection:
    """A connection to `path` (created with its folder) in WAL mode, with `schema` applied.

    One connection serves all threads (callers hold their own lock around it); other processes
    wait up to 30 s for a write lock.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    with db:
        db.executescript(schema)
    return db
