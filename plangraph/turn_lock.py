"""One turn at a time per conversation — across threads, processes and (with Postgres) machines.

A turn (run or resume) holds the conversation's lock from reading its state until its last
checkpoint is written. A second turn that finds the lock taken does not wait: it is refused with
`ConversationBusyError` (HTTP 409, CLI exit 2) and changes nothing, so two answers to one question
can never both be applied.

- SQLite checkpoints: an OS file lock (`fcntl.flock`) on `<data dir>/locks/<digest>.lock`. It
  holds between threads of one process and between processes on one host; the kernel drops it
  when the process dies.
- Postgres checkpoints: a session advisory lock (`pg_try_advisory_lock`) keyed by the thread id,
  on a connection of its own held for the turn; PostgreSQL drops it when the session ends.

`check_data_dir` refuses a data dir the stores cannot share safely (a network filesystem).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from plangraph.errors import ConversationBusyError, ServiceUnavailableError, UserFacingError

__all__ = ["NETWORK_FILESYSTEMS", "TurnLocks", "check_data_dir", "filesystem_of", "turn_locks_for"]

# SQLite's WAL needs shared memory on one host, and flock is not reliable over these.
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "ceph", "glusterfs", "lustre", "gpfs"}
    | {"fuse.sshfs", "fuse.s3fs", "fuse.gcsfuse", "fuse.rclone", "fuse.glusterfs", "fuse.cephfs"}
)


def _digest(thread_id: str) -> bytes:
    return hashlib.sha256(f"plangraph-turn\0{thread_id}".encode()).digest()


def _busy(conversation: str) -> ConversationBusyError:
    return ConversationBusyError(
        f"会话 {conversation} 正在执行另一轮请求（本进程或另一个进程）：这次请求没有执行，也没有改动任何内容。"
        f"请等那一轮结束后再试；查看进度：plangraph plan --conversation {conversation}（命令行）或 "
        f"GET /conversations/{conversation}（HTTP）。"
    )


class TurnLocks:
    """Per-conversation turn locks of one data dir (file locks) or one Postgres database."""

    def __init__(self, data_dir: Path, postgres_url: str | None = None) -> None:
        """File locks under `data_dir/locks`; with `postgres_url`, Postgres advisory locks instead."""
        self.data_dir = Path(data_dir)
        self.postgres_url = postgres_url

    def hold(self, thread_id: str, conversation: str) -> AbstractContextManager[None]:
        """Hold the turn lock of `thread_id`; ConversationBusyError at once when it is taken."""
        if self.postgres_url:
            return self._postgres(thread_id, conversation)
        return self._file(thread_id, conversation)

    @contextmanager
    def _file(self, thread_id: str, conversation: str) -> Iterator[None]:
        folder = self.data_dir / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        # Lock files stay (one empty file per conversation): unlinking one another process has
        # open would let a third process lock a new file of the same name at the same time.
        fd = os.open(folder / f"{_digest(thread_id)[:16].hex()}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _busy(conversation) from None
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @contextmanager
    def _postgres(self, thread_id: str, conversation: str) -> Iterator[None]:
        import psycopg

        key = int.from_bytes(_digest(thread_id)[:8], "big", signed=True)
        try:
            conn = psycopg.Connection.connect(str(self.postgres_url), autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as error:
            raise ServiceUnavailableError(
                f"检查点数据库（PostgreSQL）暂时不可用（{type(error).__name__}），无法锁定会话 {conversation}："
                "这次请求没有执行。请稍后重试。",
                exit_code=1,
            ) from None
        with conn:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            if not (row and row[0]):
                raise _busy(conversation)
            try:
                yield
            finally:
                if not conn.closed:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


def turn_locks_for(checkpointer: Any, data_dir: Path) -> TurnLocks:
    """The turn locks that fit `checkpointer`: Postgres advisory locks for a pooled PostgresSaver."""
    pool = getattr(checkpointer, "conn", None)
    conninfo = getattr(pool, "conninfo", None)
    if type(checkpointer).__name__ == "PostgresSaver" and isinstance(conninfo, str) and conninfo:
        return TurnLocks(data_dir, postgres_url=conninfo)
    return TurnLocks(data_dir)


def filesystem_of(path: Path, mounts: str | None = None) -> str:
    """The filesystem type of the mount holding `path` (from /proc/self/mounts; "" when unknown)."""
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
    best, kind = "", ""
    target = str(path)
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


def check_data_dir(path: Path, mounts: str | None = None) -> None:
    """Refuse a data dir on a network filesystem: its SQLite stores and file locks are not safe there."""
    kind = filesystem_of(Path(path).resolve(), mounts)
    if kind in NETWORK_FILESYSTEMS:
        raise UserFacingError(
            f"数据目录 {path} 位于网络文件系统（{kind}）上：SQLite（WAL 模式）和会话文件锁在网络文件系统上不可靠，"
            "多台机器共用它会损坏记忆与计划数据。请把 PLANGRAPH_DATA_DIR 设为本机磁盘上的目录，"
            "并让同一数据目录的所有进程运行在这一台机器上（见 docs/scale-out.md）。",
            exit_code=2,
        )
