"""Users' own documents in the knowledge index: a SQLite catalog (the record) plus Chroma vectors.

A document belongs to one user or is shared (owner `SHARED`, added with the admin key). Adding a
file is atomic: it is read and embedded first, its vectors are written under new ids, then one
SQLite transaction makes the new chunks current and drops the old ones; only after that are the
old vectors deleted. Search trusts only the ids the catalog holds, so a crash at any point leaves
either the old or the new version searchable, never a mix; `reconcile()` (run when the store opens)
deletes orphaned vectors and re-embeds chunks whose vectors are missing.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from tools.kb.corpus import KbPassage
from tools.kb.loaders import SUPPORTED, KbFileError, load_chunks
from tools.kb.search import passage_tokens
from tools.sqlite_file import use_wal

__all__ = ["SHARED", "KbDocument", "KbFileError", "UploadStore", "document_id"]

SHARED = "*"  # the owner of shared documents (user ids never contain "*")
_BATCH = 256
_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents(
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, origin TEXT NOT NULL, name TEXT NOT NULL,
    kind TEXT NOT NULL, sha TEXT NOT NULL, pages INTEGER NOT NULL, chunks INTEGER NOT NULL,
    added REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
    id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT NOT NULL,
    source TEXT NOT NULL, section TEXT NOT NULL, tokens TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('generation', 0);
"""


def document_id(owner: str, origin: str) -> str:
    """A short stable id of the document `origin` (a local path or an upload name) of `owner`."""
    return "d" + hashlib.sha256(f"{owner}\0{origin}".encode()).hexdigest()[:10]


@dataclass(frozen=True)
class KbDocument:
    """One catalogued document; `status` says what the last add did (added / updated / unchanged)."""

    id: str
    owner: str
    name: str
    kind: str
    pages: int
    chunks: int
    added: float
    status: str = ""

    @property
    def shared(self) -> bool:
        """True for a document every user's knowledge agent sees."""
        return self.owner == SHARED

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (no server path: `name` is the file name)."""
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "scope": "shared" if self.shared else "user",
            "owner": "" if self.shared else self.owner,
            "pages": self.pages,
            "chunks": self.chunks,
            "added": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.added)),
            **({"status": self.status} if self.status else {}),
        }


class UploadStore:
    """The users' documents of one data dir (`<data_dir>/kb/uploads.sqlite` + a Chroma collection)."""

    def __init__(self, folder: Path, collection: Any, embeddings: Embeddings) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(folder / "uploads.sqlite", check_same_thread=False, timeout=30)
        use_wal(self._db)
        self._db.executescript(_SCHEMA)
        self._db.commit()
        self._collection = collection
        self._embeddings = embeddings
        self._lock = threading.RLock()
        self.reconcile()

    def generation(self) -> int:
        """A number that changes whenever any document is added, replaced or removed (any process)."""
        with self._lock:
            return int(self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])

    def version(self, owners: Sequence[str]) -> tuple[Any, ...]:
        """Changes whenever a document of `owners` is added, replaced or removed (any process)."""
        marks = ",".join("?" * len(owners))
        with self._lock:
            row = self._db.execute(
                f"SELECT count(*), max(added), sum(chunks) FROM documents WHERE owner IN ({marks})",
                tuple(owners),
            ).fetchone()
        return tuple(row)

    def add(self, path: Path, owner: str, origin: str | None = None, name: str | None = None) -> KbDocument:
        """Index the file at `path` for `owner`; the same `origin` again replaces its chunks.

        Raises `KbFileError` (nothing changed) when the file cannot be read.
        """
        name = name or path.name
        origin = origin or str(path.resolve())
        doc_id = document_id(owner, origin)
        try:
            raw = path.read_bytes()
        except OSError as error:
            raise KbFileError(name, f"无法读取文件（{error.strerror}）", "请检查路径和权限") from None
        sha = hashlib.sha256(raw).hexdigest()
        current = self._row(doc_id)
        if current is not None and current[5] == sha:
            return self._document(current, "unchanged")
        chunks, pages = load_chunks(path, name)
        ids = [f"{doc_id}:{sha[:12]}:{i}" for i in range(len(chunks))]
        sources = [chunk.where for chunk in chunks]
        vectors = self._embed([self._indexed_text(name, c.section, c.text) for c in chunks])
        metadata = [{"owner": owner, "doc_id": doc_id, "sha": sha} for _ in chunks]
        # BM25 tokens once, here, not on every rebuild of a user's ranker
        rows = [
            (
                pid,
                doc_id,
                i,
                c.text,
                src,
                c.section,
                " ".join(self._tokens(pid, doc_id, name, src, c.section, c.text)),
            )
            for i, (pid, c, src) in enumerate(zip(ids, chunks, sources, strict=True))
        ]
        try:
            for start in range(0, len(ids), _BATCH):
                end = start + _BATCH
                self._collection.upsert(
                    ids=ids[start:end],
                    embeddings=vectors[start:end],
                    documents=[c.text for c in chunks[start:end]],
                    metadatas=metadata[start:end],
                )
            with self._lock, self._db:
                old = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE doc_id=?", (doc_id,))]
                self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
                self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                self._db.execute(
                    "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        doc_id,
                        owner,
                        origin,
                        name,
                        SUPPORTED[path.suffix.lower()],
                        sha,
                        pages,
                        len(ids),
                        time.time(),
                    ),
                )
                self._db.execute("UPDATE meta SET value = value + 1 WHERE key='generation'")
        except BaseException:
            self._collection.delete(ids=[i for i in ids if i not in set(self._chunk_ids(doc_id))])
            raise
        stale = [i for i in old if i not in set(ids)]
        if stale:
            self._collection.delete(ids=stale)
        return self._document(self._row(doc_id), "updated" if current is not None else "added")

    def remove(self, doc_id: str, owners: Sequence[str]) -> KbDocument | None:
        """Forget a document of one of `owners` (its chunks and vectors); None when there is none."""
        row = self._row(doc_id)
        if row is None or row[1] not in owners:
            return None
        with self._lock, self._db:
            ids = self._chunk_ids(doc_id)
            self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
            self._db.execute("DELETE FROM documents WHERE id=?", (doc_id,))
            self._db.execute("UPDATE meta SET value = value + 1 WHERE key='generation'")
        if ids:
            self._collection.delete(ids=ids)
        return self._document(row, "removed")

    def documents(self, owners: Sequence[str]) -> list[KbDocument]:
        """The documents of `owners`, newest first."""
        marks = ",".join("?" * len(owners))
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM documents WHERE owner IN ({marks}) ORDER BY added DESC", tuple(owners)
            ).fetchall()
        return [self._document(r) for r in rows]

    def passages(self, owners: Sequence[str]) -> list[KbPassage]:
        """Every chunk of `owners`' documents as a citable passage (title = file name)."""
        marks = ",".join("?" * len(owners))
        with self._lock:
            rows = self._db.execute(
                "SELECT c.id, c.doc_id, d.name, c.source, c.section, c.text, d.sha FROM chunks c "
                f"JOIN documents d ON d.id = c.doc_id WHERE d.owner IN ({marks}) ORDER BY c.id",
                tuple(owners),
            ).fetchall()
        return [
            KbPassage(pid, doc, name, src, section, text, sha)
            for pid, doc, name, src, section, text, sha in rows
        ]

    def tokens(self, owners: Sequence[str]) -> dict[str, list[str]]:
        """The BM25 tokens of every chunk of `owners`' documents, by chunk id."""
        marks = ",".join("?" * len(owners))
        with self._lock:
            rows = self._db.execute(
                f"SELECT c.id, c.tokens FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.owner IN ({marks})",
                tuple(owners),
            ).fetchall()
        return {pid: tokens.split(" ") if tokens else [] for pid, tokens in rows}

    def vector_scores(
        self, embedding: Sequence[float], owners: Sequence[str], n: int = 50
    ) -> dict[str, float]:
        """Cosine similarity of the `n` nearest chunks of `owners` (ids the catalog holds only)."""
        count = self._collection.count()
        if not count:
            return {}
        found = self._collection.query(
            query_embeddings=[list(embedding)],
            n_results=min(count, n),
            where={"owner": {"$in": list(owners)}} if len(owners) > 1 else {"owner": owners[0]},
            include=["distances"],
        )
        ids, distances = found["ids"][0], (found["distances"] or [[]])[0]
        return {pid: 1.0 - float(d) for pid, d in zip(ids, distances, strict=True)}

    def reconcile(self) -> None:
        """Make Chroma match the catalog: drop vectors it does not hold, embed chunks it lacks."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.id, d.name, c.section, c.text, d.owner, d.id, d.sha FROM chunks c "
                "JOIN documents d ON d.id = c.doc_id"
            ).fetchall()
            stored = set(self._collection.get(include=[])["ids"])
            known = {r[0] for r in rows}
            orphans = sorted(stored - known)
            for start in range(0, len(orphans), _BATCH):
                self._collection.delete(ids=orphans[start : start + _BATCH])
            missing = [r for r in rows if r[0] not in stored]
            for start in range(0, len(missing), _BATCH):
                batch = missing[start : start + _BATCH]
                self._collection.upsert(
                    ids=[r[0] for r in batch],
                    embeddings=self._embed([self._indexed_text(r[1], r[2], r[3]) for r in batch]),
                    documents=[r[3] for r in batch],
                    metadatas=[{"owner": r[4], "doc_id": r[5], "sha": r[6]} for r in batch],
                )

    def _embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            vectors.extend(self._embeddings.embed_documents(texts[start : start + _BATCH]))
        return vectors

    @staticmethod
    def _tokens(pid: str, doc_id: str, name: str, source: str, section: str, text: str) -> list[str]:
        return [
            t for t in passage_tokens(KbPassage(pid, doc_id, name, source, section, text, "")) if " " not in t
        ]

    @staticmethod
    def _indexed_text(name: str, section: str, text: str) -> str:
        """What is embedded: the file name and section give a chunk its topic."""
        return "\n".join(part for part in (Path(name).stem, section, text) if part)

    def _row(self, doc_id: str) -> tuple[Any, ...] | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM documents WHERE id=?", (doc_id,)).fetchone()
        return tuple(row) if row else None

    def _chunk_ids(self, doc_id: str) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE doc_id=?", (doc_id,))]

    @staticmethod
    def _document(row: tuple[Any, ...] | None, status: str = "") -> KbDocument:
        assert row is not None
        doc_id, owner, _origin, name, kind, _sha, pages, chunks, added = row
        return KbDocument(doc_id, owner, name, kind, int(pages), int(chunks), float(added), status)
