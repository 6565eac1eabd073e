"""Block vectors in Chroma (PersistentClient in the data dir, or a server by URL).

Embeddings are computed here with the configured LangChain `Embeddings` and handed to Chroma
explicitly; the collection still gets an adapter as its embedding function, so Chroma never falls
back to downloading its own default model.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import re
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from langchain_core.embeddings import Embeddings

from memory._store import FileTurn

__all__ = ["VectorIndex", "VectorStoreError", "chroma_client", "vector_key"]

log = logging.getLogger("plangraph.memory")
T = TypeVar("T")
RECENT_VECTORS = 256  # texts embedded ahead of a write (`VectorIndex.prepare`), newest kept
QUERY_VECTORS = 256  # query vectors kept (`VectorIndex.query_vector`), least recently used dropped


class VectorStoreError(RuntimeError):
    """The vector store cannot be opened; the message says what to do."""


def chroma_client(chroma_dir: Path, url: str | None = None) -> Any:
    """A PersistentClient on `chroma_dir`, or an HttpClient when `url` (`http://host:port`) is set.

    Telemetry is off either way. A server that does not answer raises ConnectionError (transient:
    the step is retried and the run can be resumed once the server is back).
    """
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    _register()
    if url:
        parsed = urlparse(url.strip())
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(
                f"PLANGRAPH_CHROMA_URL={url!r} is not a Chroma server URL; use http://host:port."
            )
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
        try:
            return chromadb.HttpClient(
                host=parsed.hostname, port=port, ssl=parsed.scheme == "https", settings=settings
            )
        except ValueError:  # chromadb's way of saying the server did not answer its first request
            raise ConnectionError(
                f"Chroma server {url} (PLANGRAPH_CHROMA_URL) is not reachable: start it with "
                "`chroma run --path DIR --host HOST --port PORT`, or unset PLANGRAPH_CHROMA_URL to keep "
                "vectors in the data dir."
            ) from None
    chroma_dir.mkdir(parents=True, exist_ok=True)
    try:
        # One opener at a time per directory: chromadb creates its tables on first open, and two
        # processes doing that at once fail with "table collections already exists".
        with _opening(chroma_dir):
            _set_aside_if_corrupt(chroma_dir)
            if not (chroma_dir / "chroma.sqlite3").exists():
                _forget_client(chroma_dir)  # a client cached for a deleted directory writes nowhere
            return chromadb.PersistentClient(path=str(chroma_dir), settings=settings)
    except Exception as error:  # noqa: BLE001 - chromadb raises many types for a damaged directory
        raise VectorStoreError(
            f"Chroma 向量目录 {chroma_dir} 无法打开（{type(error).__name__}: {str(error)[:160]}）。"
            f"删除或移走这个目录后重试：其中的向量可以重建（记忆向量保存在 SQLite 中，知识库会重新索引）。"
        ) from error


@contextmanager
def _opening(chroma_dir: Path) -> Iterator[None]:
    """Hold an exclusive OS lock on `<chroma_dir>.lock` (waits for another process opening it)."""
    with open(chroma_dir.with_name(f"{chroma_dir.name}.lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _set_aside_if_corrupt(chroma_dir: Path) -> None:
    """Move a Chroma directory whose SQLite file is not a database to `<dir>.corrupt-<time>`.

    Checked with Python's sqlite3 before chromadb touches it: once chromadb has failed on a path,
    it cannot open a fresh directory at that path in the same process. Everything in it can be
    rebuilt: block vectors are kept in SQLite and re-sent on first use, the knowledge index
    re-reads its documents.
    """
    database = chroma_dir / "chroma.sqlite3"
    if not database.exists():
        return
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        return  # busy or locked by a live process: not damage
    except sqlite3.DatabaseError as error:  # "file is not a database", "disk image is malformed"
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        aside = chroma_dir.with_name(f"{chroma_dir.name}.corrupt-{stamp}")
        try:
            chroma_dir.rename(aside)
        except FileNotFoundError:  # another process set it aside first
            pass
        chroma_dir.mkdir(parents=True, exist_ok=True)
        log.warning(
            "Chroma directory %s is damaged (%s); moved it to %s and started a new one (vectors are rebuilt)",
            chroma_dir,
            error,
            aside,
        )


def _identity(chroma_dir: Path | None) -> tuple[int, int] | None:
    """(device, inode) of the directory's database file; None when there is none."""
    if chroma_dir is None:
        return None
    try:
        info = (chroma_dir / "chroma.sqlite3").stat()
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino)


def _forget_client(chroma_dir: Path) -> None:
    """Drop chromadb's cached system for `chroma_dir`, so a new client opens the new directory."""
    from chromadb.api.shared_system_client import SharedSystemClient

    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    if isinstance(systems, dict):
        systems.pop(str(chroma_dir), None)
    else:  # another chromadb layout: drop every cached system (clients re-create theirs)
        SharedSystemClient.clear_system_cache()


def vector_key(namespace: str, block_id: str) -> str:
    """Chroma id of a block: unique across namespaces, stable across restarts."""
    return f"{hashlib.sha1(namespace.encode()).hexdigest()[:20]}:{block_id}"


def _block_of(key: str) -> str:
    """The block id inside a `vector_key` (Chroma returns ids without reading metadata: 3× faster)."""
    return key.split(":", 1)[1]


class _Adapter:
    """Chroma embedding-function protocol over a LangChain `Embeddings`."""

    def __init__(self, embeddings: Embeddings) -> None:
        self._embeddings = embeddings

    def __call__(self, input: Sequence[str]) -> list[list[float]]:  # noqa: A002 - Chroma's name
        return self._embeddings.embed_documents(list(input))

    def embed_query(self, input: Sequence[str]) -> list[list[float]]:  # noqa: A002
        return [self._embeddings.embed_query(t) for t in input]

    @staticmethod
    def name() -> str:
        return "plangraph_langchain"

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> _Adapter:
        """Chroma rebuilds the function when it reads a collection's schema; we embed ourselves."""
        return _Adapter(_Unbound())


class _Unbound(Embeddings):
    """Placeholder inside collections read back by Chroma: vectors are always passed explicitly."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("plangraph passes vectors to Chroma explicitly; use VectorIndex.embed instead.")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("plangraph passes vectors to Chroma explicitly; use VectorIndex.embed instead.")


def _register() -> None:
    from chromadb.utils.embedding_functions import known_embedding_functions, register_embedding_function

    if _Adapter.name() not in known_embedding_functions:
        register_embedding_function(_Adapter)


class VectorIndex:
    """One Chroma collection per namespace (and embedding model and dimension).

    Measured (bench/memory_chroma_filter.py): on one shared collection of 10k vectors a query
    filtered by namespace took 44–67 ms against 4–5 ms unfiltered, so every namespace gets its
    own collection and a query needs a filter only for a todo id. Isolation is physical as a bonus.
    """

    def __init__(
        self,
        client: Any | None,
        embeddings: Embeddings,
        chroma_dir: Path | None = None,
        *,
        opener: Callable[[], Any] | None = None,
    ) -> None:
        """`chroma_dir`: the PersistentClient's directory, watched so that a lost one is reopened.

        With `client=None`, `opener()` makes the client when a vector is first written or read:
        importing and opening Chroma costs about a second of CPU, which a turn that stores no
        vector yet (a new conversation's first request) does not pay.
        """
        if client is None and opener is None:
            raise TypeError("VectorIndex needs a Chroma client or an opener that makes one")
        self._client = client
        self._opener = opener
        self.embeddings = embeddings
        self.chroma_dir = chroma_dir
        self.generation = 0  # +1 each time the directory was lost and reopened (vectors to re-send)
        self._model = re.sub(r"[^A-Za-z0-9]", "", type(embeddings).__name__)[:24] or "emb"
        self._collections: dict[tuple[str, int], Any] = {}
        self._recent: OrderedDict[str, list[float]] = OrderedDict()  # text -> vector, see `prepare`
        self._recent_lock = threading.Lock()
        self._queries: OrderedDict[str, list[float]] = OrderedDict()  # query text -> vector (LRU)
        self._counts: dict[tuple[str, int], int] = {}
        self._max_batch: int | None = None
        self._opened = _identity(chroma_dir) if client is not None else None
        self._reopen_lock = threading.Lock()
        # Chroma's bindings hold the GIL while they wait for another process's lock on the
        # directory's database, stopping every thread here: processes sharing the directory take
        # turns first (writers alone, readers together), waiting without the GIL.
        self._turn = FileTurn(f"{chroma_dir}.access", 30.0) if chroma_dir is not None else None

    def close(self) -> None:
        """Close the turn-taking side file (the Chroma client is shared and stays open)."""
        if self._turn is not None:
            self._turn.close()

    def _hold(self, exclusive: bool) -> AbstractContextManager[None]:
        return self._turn.hold(exclusive) if self._turn is not None else nullcontext()

    @property
    def client(self) -> Any:
        """The Chroma client, opened on first use."""
        if self._client is None:
            with self._reopen_lock:
                if self._client is None:
                    assert self._opener is not None
                    client = self._opener()
                    self._opened = _identity(self.chroma_dir)
                    self._client = client
        return self._client

    def check_directory(self) -> bool:
        """Reopen the local Chroma directory if it was deleted or replaced; True when it was.

        chromadb keeps the deleted database open and every later write fails with "attempt to
        write a readonly database". The new directory starts empty: the callers re-send vectors
        from SQLite (BlockMemory does when `generation` changed). Nothing to check before the
        client is first opened.
        """
        if self.chroma_dir is None or self._client is None or _identity(self.chroma_dir) == self._opened:
            return False
        with self._reopen_lock:
            if _identity(self.chroma_dir) == self._opened:
                return False
            log.warning("Chroma directory %s was removed or replaced; reopening it", self.chroma_dir)
            _forget_client(self.chroma_dir)
            self._client = chroma_client(self.chroma_dir)
            self._collections.clear()
            self._counts.clear()
            self._opened = _identity(self.chroma_dir)
            self.generation += 1
            return True

    def _get(self, namespace: str, dim: int, create: bool = True) -> Any:
        """The namespace's collection; with `create=False`, None when it does not exist yet."""
        self.check_directory()
        key = (namespace, dim)
        col = self._collections.get(key)
        if col is None:
            digest = hashlib.sha1(namespace.encode()).hexdigest()[:16]
            name = f"plangraph_blocks_{self._model}_{dim}_{digest}"
            if not create:
                from chromadb.errors import NotFoundError

                try:
                    col = self.client.get_collection(name=name, embedding_function=_Adapter(self.embeddings))
                except NotFoundError:
                    return None
                self._collections[key] = col
                return col
            col = self._collections[key] = self.client.get_or_create_collection(
                name=name,
                embedding_function=_Adapter(self.embeddings),
                metadata={"hnsw:space": "cosine", "namespace": namespace},
            )
        return col

    def _using(
        self,
        namespace: str,
        dim: int,
        use: Callable[[Any], T],
        empty: T | None = None,
        write: bool = False,
        create: bool = True,
    ) -> T:
        """`use(collection)`, once more if the directory was deleted during the call (then reopened).

        `_get` checks the directory first, but a deletion can land between that check and the call
        ("attempt to write a readonly database", "disk I/O error"); the retry goes to the new
        directory, and BlockMemory re-sends the older vectors there (`generation` changed). With
        `empty`, that is the answer instead of a retry (a query of the new, still empty directory).
        `write`: the call changes the directory (so does creating a collection not seen yet).
        `create=False`: a namespace without a collection is not given one; `use(None)` answers.
        """
        with self._hold(write or (create and (namespace, dim) not in self._collections)):
            try:
                return use(self._get(namespace, dim, create))
            except Exception:
                if not self.check_directory():
                    raise
                log.warning("Chroma directory %s was removed during a call; reopened it", self.chroma_dir)
                return empty if empty is not None else use(self._get(namespace, dim, create))

    def count(self, namespace: str, dim: int) -> int:
        """Vectors stored for `namespace` (cached once non-zero; our own writes update it).

        Only reads: a namespace that has no collection yet counts 0 and is not given one.
        """
        key = (namespace, dim)
        if key in self._counts:
            return self._counts[key]
        size = self._using(namespace, dim, lambda col: 0 if col is None else col.count(), create=False)
        if size:  # an empty collection is asked again: another process may fill it
            self._counts[key] = size
        return size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Document vectors for `texts`; the texts embedded last (see `prepare`) are not embedded again."""
        if not texts:
            return []
        with self._recent_lock:
            known = {t: self._recent[t] for t in texts if t in self._recent}
            if len(self._recent) > RECENT_VECTORS:  # a big write's vectors, used now: let them go
                for text in known:
                    del self._recent[text]
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            known.update(zip(missing, self.embeddings.embed_documents(missing), strict=True))
        return [known[t] for t in texts]

    def query_vector(self, text: str) -> list[float]:
        """The query vector of `text`, embedded once per text among the last `QUERY_VECTORS` asked.

        An agent asks the same thing again (each turn of a plan re-reads what the user said; a
        retried step repeats its search), and the embedding is most of a search's time (~4 ms idle
        for MiniLM on one thread, against ~0.01 ms for a hit here).
        """
        with self._recent_lock:
            vector = self._queries.get(text)
            if vector is not None:
                self._queries.move_to_end(text)
                return vector
        vector = self.embeddings.embed_query(text)
        with self._recent_lock:
            self._queries[text] = vector
            while len(self._queries) > QUERY_VECTORS:
                self._queries.popitem(last=False)
        return vector

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed `texts` now and keep their vectors for the next `embed` of the same texts.

        Block memory embeds the texts a write will need before it takes the database's write
        lock, so that the lock is held for the writes only and not for the model's ~5–50 ms per
        text: with several turns (or server processes) writing at once, the others waited for it.
        """
        vectors = self.embed(texts)
        with self._recent_lock:
            for text, vector in zip(texts, vectors, strict=True):
                self._recent[text] = vector
                self._recent.move_to_end(text)
            while len(self._recent) > max(RECENT_VECTORS, len(texts)):  # a big write keeps all its own
                self._recent.popitem(last=False)

    def upsert(self, namespace: str, items: Sequence[tuple[str, str, list[float]]]) -> None:
        """Store (block_id, todo_id, vector) items of one namespace."""
        if not items:
            return
        dim = len(items[0][2])
        step = self._batch_size()
        for start in range(0, len(items), step):  # Chroma rejects batches above its maximum
            part = items[start : start + step]
            self._using(
                namespace,
                dim,
                lambda col, part=part: col.upsert(  # type: ignore[misc]
                    ids=[vector_key(namespace, b) for b, _, _ in part],
                    embeddings=[v for _, _, v in part],
                    metadatas=[{"ns": namespace, "block_id": b, "todo_id": t} for b, t, _ in part],
                ),
                write=True,
            )
        self._counts.pop((namespace, dim), None)

    def _batch_size(self) -> int:
        if self._max_batch is None:
            getter = getattr(self.client, "get_max_batch_size", None)
            self._max_batch = max(1, min(int(getter()) if getter else 1000, 5000))
        return self._max_batch

    def delete(self, namespace: str, block_ids: Sequence[str]) -> None:
        """Forget vectors of these blocks."""
        for (ns, dim), col in list(self._collections.items()):
            if ns == namespace and block_ids:
                with self._hold(True):
                    col.delete(ids=[vector_key(namespace, b) for b in block_ids])
                self._counts.pop((ns, dim), None)

    def query(
        self, vector: list[float], namespaces: Sequence[str], n: int, todo_id: str | None = None
    ) -> list[tuple[str, str, float]]:
        """Nearest blocks as (namespace, block_id, cosine), only from `namespaces` (and `todo_id`)."""
        found: list[tuple[str, str, float]] = []
        for ns in namespaces:
            if not self.count(ns, len(vector)):
                continue
            # Not capped at the count: it is cached, and another process may have added vectors
            # since (Chroma returns fewer than asked for without complaint).
            res: Any = self._using(
                ns,
                len(vector),
                lambda col: col.query(  # type: ignore[misc]
                    query_embeddings=[vector],
                    n_results=n,
                    where=None if todo_id is None else {"todo_id": todo_id},
                    include=["distances"],  # the block id is in the vector's id: no metadata read
                ),
                empty={"ids": [[]], "distances": [[]]},
            )
            ids, dists = res["ids"][0], res["distances"][0]
            found += [(ns, _block_of(i), 1.0 - float(d)) for i, d in zip(ids, dists, strict=True)]
        return sorted(found, key=lambda item: -item[2])[:n]
