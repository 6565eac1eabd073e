"""Which failures are worth another attempt, in one place for every node, tool and entry point.

Transient faults (the network, the model endpoint's 5xx and rate limits, a timeout, an empty or
garbled model answer) are retried by the nodes' `RETRY_POLICY` and, when they persist, leave the
run resumable at its last checkpoint. Two of them stop the run without another attempt
(`retryable`): a model call cut at its wall-clock deadline (`ModelDeadlineError`: it already took
the whole `PLANGRAPH_MODEL_TIMEOUT`, a retry would double the wait) and a refusal
(`ModelRejectedError`, a 4xx: the same request is refused again). `model_errors()` adds every other
HTTP status error: code that can go on without the model (field extraction, gists, summaries)
catches these and keeps its deterministic result.

Both are functions (`transient_errors()`, `model_errors()`), not import-time tuples: the model's
client library (`openai`, half a second of CPU to import) is loaded only when a model is
configured, and its exception classes join the tuples once it is loaded — before that no error
of its can exist. The same holds for `psycopg` (Postgres checkpointer) and chromadb.

`is_service_fault(error)` says whether a failure is the fault of a service the run depends on — the
model, a database, the disk, the vector store — rather than of our code: a full or read-only disk,
a locked or unreadable SQLite file, Chroma's internal errors, any model error. Such a failure never
marks a plan step failed: the turn ends with an error naming the service, the checkpoint keeps the
step to run, and `resume` finishes the plan once the service is back. Anything else is a bug or a
bad input and is never retried.
"""

from __future__ import annotations

import errno
import sqlite3
import sys
from typing import Any

import httpx
from langchain_core.exceptions import ModelError
from langgraph.types import RetryPolicy

from memory.vectors import VectorStoreError

__all__ = [
    "RETRY_POLICY",
    "model_errors",
    "ModelDeadlineError",
    "ModelFaultError",
    "ModelRejectedError",
    "is_service_fault",
    "retryable",
    "storage_fault_kind",
    "transient_errors",
]


class ModelFaultError(RuntimeError):
    """The model endpoint answered nothing usable: an empty stream or a body that is not the API's JSON.

    The message says what came back and what to do; the run stays resumable.
    """


class ModelDeadlineError(ModelFaultError, TimeoutError):
    """A model call (connect, wait and the whole streamed answer) ran past its wall-clock deadline and was cut."""


class ModelRejectedError(RuntimeError):
    """The model endpoint refused the request (HTTP 4xx); the message quotes the server and says what to do.

    `kind` names the cause when the server's status or error code tells it: "overflow" (the request
    does not fit the context window), "unknown_model", "bad_key", else "rejected".
    """

    def __init__(self, message: str, kind: str = "rejected", status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


_TRANSIENT_BASE: tuple[type[Exception], ...] = (
    ConnectionError,
    TimeoutError,
    httpx.TransportError,
    ModelFaultError,
    ModelRejectedError,
)
_MODEL_BASE: tuple[type[Exception], ...] = (httpx.HTTPError, ModelError)
_OPENAI_TRANSIENT = ("APIConnectionError", "RateLimitError", "InternalServerError")


def _loaded(module: str) -> Any:
    """`module` if this process has imported it, else None (no exception of its can exist yet)."""
    return sys.modules.get(module)


def transient_errors() -> tuple[type[Exception], ...]:
    """A service failed: the node re-raises (its step is not marked failed) and the run stops resumably.

    Connection errors, timeouts, httpx transport errors, the model's faults and refusals, and — once
    `openai` is imported — its connection errors, rate limits and 5xx. `retryable` says which of
    these are worth another attempt first: not a refusal (the same request is refused again) and not
    a call already cut at its deadline.
    """
    openai = _loaded("openai")
    if openai is None:
        return _TRANSIENT_BASE
    return (*_TRANSIENT_BASE[:3], *(getattr(openai, n) for n in _OPENAI_TRANSIENT), *_TRANSIENT_BASE[3:])


def model_errors() -> tuple[type[Exception], ...]:
    """Every way a model call can fail without it being our bug.

    Transient faults, HTTP status errors (4xx included: `openai.APIError`, `httpx.HTTPError`) and
    LangChain's own model errors from other chat-model integrations.
    """
    openai = _loaded("openai")
    extra = (openai.APIError,) if openai is not None else ()
    return (*transient_errors(), *extra, *_MODEL_BASE)


def retryable(error: BaseException) -> bool:
    """Whether a node that raised `error` runs again: transient faults, except a cut call or a refusal."""
    return isinstance(error, transient_errors()) and not isinstance(
        error, ModelDeadlineError | ModelRejectedError
    )


RETRY_POLICY = RetryPolicy(max_attempts=3, initial_interval=0.5, max_interval=5.0, retry_on=retryable)

# SQLite primary result codes that describe the file or the disk, not the SQL we sent.
_SQLITE_STORAGE_CODES = {
    sqlite3.SQLITE_PERM,
    sqlite3.SQLITE_BUSY,
    sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_NOMEM,
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_CORRUPT,
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_PROTOCOL,
    sqlite3.SQLITE_NOTADB,
}
_SQLITE_FULL_CODES = {sqlite3.SQLITE_FULL}
_SQLITE_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
# OS errors of the disk or the process's limits, not of a path our code got wrong.
_OS_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_OS_STORAGE = _OS_FULL | {errno.EROFS, errno.EIO, errno.EACCES, errno.EMFILE, errno.ENFILE, errno.ENOMEM}


def storage_fault_kind(error: BaseException) -> str | None:
    """The kind of disk or database fault `error` is ("full", "busy", "storage"); None for anything else."""
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        if code is None:  # raised by hand (no result code): only the operational kind is the file's
            return "storage" if isinstance(error, sqlite3.OperationalError) else None
        primary = code & 0xFF
        if primary in _SQLITE_FULL_CODES:
            return "full"
        if primary in _SQLITE_BUSY_CODES:
            return "busy"
        return "storage" if primary in _SQLITE_STORAGE_CODES else None
    if isinstance(error, OSError) and not isinstance(error, ConnectionError | TimeoutError):
        if error.errno in _OS_FULL:
            return "full"
        return "storage" if error.errno in _OS_STORAGE else None
    psycopg = _loaded("psycopg")  # the Postgres checkpointer's driver, imported only when it is used
    if psycopg is not None and isinstance(error, psycopg.OperationalError):
        return "storage"
    if isinstance(error, VectorStoreError) or _chroma_internal(error):
        return "storage"
    return None


def is_service_fault(error: BaseException) -> bool:
    """True when `error` is a service's fault (model, database, disk, vector store), not a bug of ours."""
    return isinstance(error, model_errors()) or storage_fault_kind(error) is not None


def _chroma_internal(error: BaseException) -> bool:
    """True for Chroma's own internal error (its database failed under it, e.g. read-only or full).

    Looked up lazily: without chromadb imported, an error cannot be one of its.
    """
    chroma_errors = sys.modules.get("chromadb.errors")
    internal = getattr(chroma_errors, "InternalError", None)
    return internal is not None and isinstance(error, internal)
