"""Checkpointer selection: SQLite file in the data dir by default, Postgres by URL."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["open_checkpointer"]


@contextmanager
def open_checkpointer(data_dir: Path, url: str | None = None) -> Iterator[BaseCheckpointSaver]:
    """Yield a ready checkpointer; `url` (or PLANGRAPH_CHECKPOINT_URL) `postgresql://…` selects Postgres."""
    url = url if url is not None else os.environ.get("PLANGRAPH_CHECKPOINT_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(url) as pg_saver:
            pg_saver.setup()
            yield pg_saver
        return
    if url:
        raise ValueError(
            f"PLANGRAPH_CHECKPOINT_URL={url!r} is not a postgresql:// URL; unset it to use SQLite."
        )
    from langgraph.checkpoint.sqlite import SqliteSaver

    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()
