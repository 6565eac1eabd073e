"""The offload store: big tool results live in SQLite; messages keep a preview and `store://<id>`."""

from __future__ import annotations

import re
import time
import uuid

from memory._store import Store
from memory.tokens import count_tokens, truncate
from memory.types import UnknownDataIdError

__all__ = ["NO_OWNER", "OffloadStore", "OwnerRequiredError", "parse_data_id", "preview"]

_ID = re.compile(r"[0-9a-f]{32}")


def parse_data_id(data_id: str) -> str:
    """The bare id of `store://<id>` or `<id>`; anything else raises `UnknownDataIdError`."""
    bare = data_id.strip().removeprefix("store://")
    if not _ID.fullmatch(bare):
        raise UnknownDataIdError(
            f"{data_id!r} is not a data id; ids look like store:// followed by 32 hex digits "
            "(copy one from a block's data_ids or a tool result)."
        )
    return bare


def preview(content: str, ref: str, preview_tokens: int) -> str:
    """The short text a message keeps in place of offloaded content (Chinese, names the ref)."""
    total = count_tokens(content)
    head = truncate(content, preview_tokens).rstrip()
    return f"{head}\n…（完整结果共 {total} tokens、{len(content)} 字符，已存储至 {ref}，可调用 load 工具分页读取）"


# What `owner` reports for blobs stored before every blob had an owner: a namespace no one has,
# so a reader that names its namespace (the `load` tool) never sees them.
NO_OWNER = ""


class OwnerRequiredError(ValueError):
    """A blob was offered without an owner namespace."""


class OffloadStore:
    """Blobs keyed by random 128-bit ids, each owned by a namespace.

    Ids appear in plan JSON a user may share, so an id alone must not open a blob: readers check
    the owner (`BlockMemory.load(..., namespace=...)` lets the owner's user read blobs of the
    same conversation only).
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    def put(self, content: str, namespace: str | None = None) -> str:
        """Store `content` owned by `namespace`; return its full reference `store://<id>`."""
        if not namespace:
            raise OwnerRequiredError(
                "offloaded content needs an owner: pass the namespace of the agent that stores it "
                "(BlockMemory.scope(agent, user, conversation))."
            )
        bare = uuid.uuid4().hex
        with self._store.transaction() as conn:
            conn.execute(
                "INSERT INTO blobs(id, ns, content, created_at) VALUES(?,?,?,?)",
                (bare, namespace, content, time.time()),
            )
        return f"store://{bare}"

    def owner(self, data_id: str) -> str:
        """Namespace that owns the blob (`NO_OWNER` for blobs stored before owners were required)."""
        bare = parse_data_id(data_id)
        rows = self._store.query("SELECT ns FROM blobs WHERE id=?", (bare,))
        if not rows:
            raise UnknownDataIdError(f"store://{bare} does not exist in this memory.")
        return rows[0][0] or NO_OWNER

    def get(self, data_id: str, offset: int = 0, limit: int | None = None) -> str:
        """Characters `offset`..`offset+limit` of the blob (all of the rest when `limit` is None)."""
        if offset < 0 or (limit is not None and limit < 0):
            raise ValueError(f"offset={offset} and limit={limit} must be ≥ 0.")
        bare = parse_data_id(data_id)
        length = -1 if limit is None else limit  # substr with a negative length: to the end
        sql = "SELECT CASE WHEN ? < 0 THEN substr(content, ?) ELSE substr(content, ?, ?) END FROM blobs WHERE id=?"
        rows = self._store.query(sql, (length, offset + 1, offset + 1, length, bare))
        if not rows:
            raise UnknownDataIdError(f"store://{bare} does not exist in this memory.")
        return rows[0][0]

    def size(self, data_id: str) -> int:
        """Length of the blob in characters."""
        rows = self._store.query("SELECT length(content) FROM blobs WHERE id=?", (parse_data_id(data_id),))
        if not rows:
            raise UnknownDataIdError(f"{data_id} does not exist in this memory.")
        return int(rows[0][0])
