"""Checkpointer selection: SQLite file in the data dir by default, Postgres by URL.

`PLANGRAPH_CHECKPOINT_URL=postgresql://user:pass@host:port/db` (or the `url` argument) selects
PostgresSaver on a small connection pool. Its tables are created on first use — once per process
and URL, under a Postgres advisory lock so that several processes starting together do not race
on the migrations.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

from langgraph.checkpoint.base import BaseCheckpointSaver

from plangraph.errors import UserFacingError

__all__ = ["open_checkpointer", "redact_url"]

_SETUP_LOCK_KEY = 0x706C616E67  # "plang": one advisory lock id for plangraph's schema set-up
_set_up: set[str] = set()
_set_up_lock = threading.Lock()


def redact_url(url: str) -> str:
    """`url` with its password replaced by `***` (safe to show in messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _sqlite_timeout() -> float:
    """Seconds a write waits for another process's lock on the SQLite file (PLANGRAPH_SQLITE_TIMEOUT)."""
    raw = os.environ.get("PLANGRAPH_SQLITE_TIMEOUT", "").strip() or "30"
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise _user_error(
            f"PLANGRAPH_SQLITE_TIMEOUT={raw!r} 无效：请给出 0 到 3600 之间的秒数（默认 30）。", exit_code=2
        )
    return seconds


def _take_setup_lock(conn: Any, url: str, wait_seconds: float = 120) -> None:
    """Take the schema set-up advisory lock, polling with pg_try_advisory_lock.

    Not a blocking pg_advisory_lock: PostgresSaver's migrations run CREATE INDEX CONCURRENTLY,
    which waits for every open transaction — including a session blocked in pg_advisory_lock
    behind it — and PostgreSQL reports a deadlock (seen with 4 processes starting at once).
    Between tries a waiting process holds no transaction.
    """
    deadline = time.monotonic() + wait_seconds
    query = "SELECT pg_try_advisory_lock(%s) AS locked"
    while not conn.execute(query, (_SETUP_LOCK_KEY,)).fetchone()["locked"]:
        if time.monotonic() > deadline:
            raise _user_error(
                f"PostgreSQL（{redact_url(url)}）的表结构初始化等待超过 {wait_seconds:g} 秒："
                "另一个进程正在初始化或已中断。请稍后重试。",
                exit_code=1,
            )
        time.sleep(0.1)


def _user_error(message: str, exit_code: int) -> Exception:
    return UserFacingError(message, exit_code=exit_code)


@contextmanager
def _postgres(url: str) -> Iterator[BaseCheckpointSaver]:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import ConnectionPool

    options: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    try:  # one direct connection first: a clear error now instead of a pool timeout later
        with psycopg.Connection.connect(url, connect_timeout=10, **options) as conn, _set_up_lock:
            if url not in _set_up:
                _take_setup_lock(conn, url)
                try:
                    PostgresSaver(conn).setup()
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK_KEY,))
                _set_up.add(url)
    except psycopg.OperationalError as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise _user_error(
            f"无法连接 PostgreSQL（PLANGRAPH_CHECKPOINT_URL={redact_url(url)}）：{reason}。"
            "请确认数据库已启动、地址和账号正确；或取消设置 PLANGRAPH_CHECKPOINT_URL，改用数据目录里的 SQLite。",
            exit_code=1,
        ) from None
    # A small pool, checked on borrow: a connection dropped by a database restart or an idle
    # timeout is replaced instead of failing every later request of a long-running server.
    # PostgresSaver serialises its queries under one lock, so one connection is in use at a time.
    with ConnectionPool(
        url, min_size=1, max_size=2, kwargs=options, check=ConnectionPool.check_connection, open=False
    ) as pool:
        yield PostgresSaver(cast("ConnectionPool[psycopg.Connection[DictRow]]", pool))  # rows: dict_row


@contextmanager
def open_checkpointer(data_dir: Path, url: str | None = None) -> Iterator[BaseCheckpointSaver]:
    """Yield a ready checkpointer; `url` (or PLANGRAPH_CHECKPOINT_URL) `postgresql://…` selects Postgres.

    `url=""` forces SQLite even when the variable is set.
    """
    url = url if url is not None else os.environ.get("PLANGRAPH_CHECKPOINT_URL", "")
    url = url.strip()
    if url.startswith(("postgres://", "postgresql://")):
        with _postgres(url) as pg_saver:
            yield pg_saver
        return
    if url:
        raise _user_error(
            f"PLANGRAPH_CHECKPOINT_URL={redact_url(url)!r} 不是 postgresql:// 地址。"
            "请改成 postgresql://用户:密码@主机:端口/数据库，或取消设置它以使用 SQLite。",
            exit_code=2,
        )
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tools.sqlite_file import use_wal

    path = data_dir / "checkpoints.sqlite"
    timeout = _sqlite_timeout()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, timeout=timeout)
    except (OSError, sqlite3.Error) as error:
        raise _cannot_open(path, error) from None
    try:
        try:
            use_wal(conn, timeout)
            saver = SqliteSaver(conn)
            saver.setup()
        except sqlite3.Error as error:
            raise _cannot_open(path, error) from None
        yield saver
    finally:
        conn.close()


def _cannot_open(path: Path, error: Exception) -> Exception:
    """The error shown when the checkpoint database cannot be opened (full disk, permissions, …)."""
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return _user_error(
        f"无法打开检查点数据库 {path}（{type(error).__name__}: {reason}）：请检查磁盘空间和目录权限"
        "（PLANGRAPH_DATA_DIR），处理后重试。没有改动任何会话。",
        exit_code=1,
    )
