"""The persistent knowledge index: passages and vectors in Chroma, refreshed incrementally.

Chroma is the single record of what is indexed: each passage's metadata holds its file key and
content hash, so `refresh()` embeds only files that are new or changed and deletes passages of
files that are gone. The BM25 side is rebuilt in memory from the stored passages.

Users' own documents (`plangraph kb add`, `PUT /kb/documents/…`) live beside them in an
`UploadStore`; `for_user(user)` is the index as one user's knowledge agent sees it: the folder
documents, the shared documents and that user's own, never another user's.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings, FakeEmbeddings

from tools.kb.corpus import KbPassage, file_sha, read_document, scan_documents
from tools.kb.loaders import KbFileError
from tools.kb.meaning import QuestionMeaning, asked_texts
from tools.kb.search import HybridRanker, KbHit, RankerSettings, passage_tokens
from tools.kb.uploads import SHARED, UploadStore

__all__ = ["IndexReport", "KnowledgeIndex", "embedding_id"]

log = logging.getLogger("plangraph.knowledge")

_FAKES = (DeterministicFakeEmbedding, FakeEmbeddings)  # PLANGRAPH_EMBEDDINGS=hash and unit tests
_BATCH = 256  # passages per upsert: well under Chroma's batch limit, large enough for the model


@dataclass(frozen=True)
class IndexReport:
    """What one refresh changed, in files."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0

    @property
    def changed(self) -> bool:
        """True when any file was (re)indexed or dropped."""
        return bool(self.added or self.updated or self.removed)


def embedding_id(embeddings: Embeddings) -> str:
    """A short name for the embedding model; vectors of different models never share a collection."""
    name = getattr(embeddings, "model", None) or getattr(embeddings, "size", None) or ""
    raw = f"{type(embeddings).__name__}-{name}".lower()
    return re.sub(r"[^a-z0-9._-]+", "-", raw).strip("-.")[:60]


class KnowledgeIndex:
    """Passages of the documents under `dirs`, stored under `data_dir/kb/chroma` (or the PLANGRAPH_CHROMA_URL server).

    One instance per data dir and process; `refresh` and `search` are serialised by a lock.
    Without a user it sees the folder documents and the shared uploads.
    """

    def __init__(
        self,
        data_dir: Path,
        dirs: Sequence[Path],
        embeddings: Embeddings,
        settings: RankerSettings | None = None,
        chroma_url: str | None = None,
        meaning: QuestionMeaning | None = None,
    ) -> None:
        """`meaning` compares a question with the documents' everyday questions (default: USE multilingual)."""
        from tools.kb._chroma import ChromaEmbeddings, kb_client

        self.dirs = list(dirs)
        self.embeddings = embeddings
        self.settings = settings or RankerSettings()
        client = kb_client(Path(data_dir), chroma_url)
        self._collection = client.get_or_create_collection(
            f"kb-{embedding_id(embeddings)}",
            embedding_function=ChromaEmbeddings(embeddings),  # type: ignore[arg-type]
            metadata={"hnsw:space": "cosine"},
        )
        self._lock = threading.RLock()
        self._ranker: HybridRanker | None = None
        self.user: str | None = None
        self.uploads = UploadStore(
            Path(data_dir) / "kb",
            client.get_or_create_collection(
                f"kbu-{embedding_id(embeddings)}",
                embedding_function=ChromaEmbeddings(embeddings),  # type: ignore[arg-type]
                metadata={"hnsw:space": "cosine"},
            ),
            embeddings,
        )
        self._doc_summary: dict[str, str] = {}  # doc_key → its summary id, for this view
        self.meaning = meaning or QuestionMeaning()
        self._asked: dict[str, list[str]] = {}  # doc_key → its everyday questions and title, for this view
        self._seen: tuple[Any, ...] | None = None  # (folder passages, uploads version) of the ranker
        self._folder_tokens: dict[str, list[str]] = {}  # shared by the user views (shallow copies)
        self._summaries: dict[str, list[float]] = {}  # summary id → unit vector, shared likewise
        self._summary_store = client.get_or_create_collection(
            f"kbs-{embedding_id(embeddings)}",
            embedding_function=ChromaEmbeddings(embeddings),  # type: ignore[arg-type]
            metadata={"hnsw:space": "cosine"},
        )
        self._views: dict[str, KnowledgeIndex] = {}
        self._refused: dict[str, str] = {}  # folder files that are not text: key → sha (warned once)

    def for_user(self, user: str) -> KnowledgeIndex:
        """The index as `user` sees it (folder documents, shared uploads and the user's own)."""
        with self._lock:
            view = self._views.get(user)
            if view is None:
                view = copy.copy(self)
                view.user, view._ranker, view._seen, view._views = user, None, None, {}
                view._doc_summary, view._asked = {}, {}
                self._views[user] = view
            return view

    @property
    def owners(self) -> list[str]:
        """The upload owners this index searches: shared, plus its user."""
        return [SHARED] if self.user is None else [SHARED, self.user]

    def refresh(self) -> IndexReport:
        """Index new and changed files, drop passages of deleted files."""
        with self._lock:
            files = scan_documents(self.dirs)
            stored = self._collection.get(include=["metadatas"])
            rows = list(zip(stored["ids"], stored["metadatas"] or [], strict=True))
            known = {str(m["doc_key"]): str(m["sha"]) for _, m in rows}
            fresh = {key: path for key, path in files.items() if known.get(key) != file_sha(path)}
            stale = [pid for pid, m in rows if m["doc_key"] not in files or m["doc_key"] in fresh]
            if stale:
                self._collection.delete(ids=stale)
            read = {key: self._read(key, path) for key, path in fresh.items()}
            self._add([p for passages in read.values() for p in passages])
            files = {key: path for key, path in files.items() if read.get(key) != []}
            fresh = {key: path for key, path in fresh.items() if read[key]}
            updated = sum(1 for key in fresh if key in known)
            gone = sum(1 for key in known if key not in files)
            report = IndexReport(len(fresh) - updated, updated, gone, len(files) - len(fresh))
            version = self.uploads.version(self.owners)
            seen = (hash(tuple(sorted(pid for pid, m in rows if m["doc_key"] in files))), version)
            if report.changed or self._ranker is None or seen != self._seen:
                folder = self._stored_passages()
                for p in folder:
                    if p.passage_id not in self._folder_tokens:
                        self._folder_tokens[p.passage_id] = passage_tokens(p)
                tokens = {**self._folder_tokens, **self.uploads.tokens(self.owners)}
                passages = folder + self.uploads.passages(self.owners)
                self._ranker = HybridRanker(passages, self.settings, tokens)
                self._embed_summaries(passages)
                self._asked = asked_texts(passages)
                self._seen = (hash(tuple(sorted(p.passage_id for p in folder))), version)
            return report

    def _read(self, key: str, path: Path) -> list[KbPassage]:
        """A folder document's passages; none for a file that is not text (logged once per version)."""
        try:
            return read_document(path, key)
        except KbFileError as error:
            sha = file_sha(path)
            if self._refused.get(key) != sha:
                log.warning("knowledge folder: %s (not indexed)", error)
                self._refused[key] = sha
            return []

    def search(self, query: str, k: int = 5) -> list[KbHit]:
        """Top `k` passages for `query` (call `refresh` first)."""
        with self._lock:
            if self._ranker is None:
                raise RuntimeError("KnowledgeIndex.search called before refresh(); call refresh() first.")
            if not self._ranker.passages or not query.strip():
                return []
            embedding = self.embeddings.embed_query(query)
            vector = self.uploads.vector_scores(embedding, self.owners)
            count = self._collection.count()
            if count:
                found = self._collection.query(
                    query_embeddings=[embedding],  # type: ignore[arg-type]
                    n_results=min(count, 50),
                    include=["distances"],
                )
                ids, distances = found["ids"][0], (found["distances"] or [[]])[0]
                vector.update({pid: 1.0 - float(d) for pid, d in zip(ids, distances, strict=True)})
            # a test stand-in's vectors mean nothing: its summary similarities neither answer nor veto
            summaries = None if isinstance(self.embeddings, _FAKES) else self._summary_scores(embedding)
            floor = self.settings.bridge_floor
            words = self._ranker.bridge_terms(query) if floor <= 1.0 else []
            self.meaning.begin([query, *words])  # one batch for the question and its words
            asked = self.meaning.closeness(query, self._asked)
            bridges = self.meaning.bridges(words, self._ranker.vocabulary, floor)
            return self._ranker.rank(query, vector, k, summaries, asked, bridges)

    def query_terms(self, query: str) -> list[str]:
        """The topic terms of `query` as the ranker sees them (call `refresh` first)."""
        return self._ranker.query_terms(query) if self._ranker else []

    def term_weights(self, terms: Sequence[str]) -> dict[str, float]:
        """IDF weights of `terms` in the indexed corpus (call `refresh` first)."""
        return self._ranker.term_weights(terms) if self._ranker else dict.fromkeys(terms, 1.0)

    @property
    def size(self) -> int:
        """Number of indexed documents."""
        return len({p.doc_key for p in self._ranker.passages}) if self._ranker else 0

    def _add(self, passages: list[KbPassage]) -> None:
        """Embed and store passages in batches (one model call per batch, not per file)."""
        for start in range(0, len(passages), _BATCH):
            batch = passages[start : start + _BATCH]
            self._collection.upsert(
                ids=[p.passage_id for p in batch],
                documents=[p.text for p in batch],
                metadatas=[
                    {
                        "doc_key": p.doc_key,
                        "title": p.title,
                        "source": p.source,
                        "tags": p.tags,
                        "sha": p.sha,
                        "english": p.english,
                        "questions": p.questions,
                    }
                    for p in batch
                ],
            )

    def _embed_summaries(self, passages: Sequence[KbPassage]) -> None:
        """Vectors of the English summaries: from memory, else stored in Chroma, else embedded once and stored."""
        wanted = {_summary_id(p.english): p.english for p in passages if p.english}
        missing = [sid for sid in wanted if sid not in self._summaries]
        if missing:
            got = self._summary_store.get(ids=missing, include=["embeddings"])
            stored = got["embeddings"] if got["embeddings"] is not None else []
            for sid, vec in zip(got["ids"], stored, strict=True):
                self._summaries[sid] = _unit(vec)
            new = [sid for sid in missing if sid not in self._summaries]
            if new:
                vectors = [_unit(v) for v in self.embeddings.embed_documents([wanted[sid] for sid in new])]
                self._summary_store.upsert(
                    ids=new,
                    embeddings=vectors,  # type: ignore[arg-type]
                    documents=[wanted[sid] for sid in new],
                )
                self._summaries.update(zip(new, vectors, strict=True))
        self._doc_summary = {p.doc_key: _summary_id(p.english) for p in passages if p.english}

    def _summary_scores(self, embedding: Sequence[float]) -> dict[str, float]:
        """doc_key → cosine similarity of the query to the document's English summary."""
        query = _unit(embedding)
        return {
            key: sum(a * b for a, b in zip(query, self._summaries[sid], strict=True))
            for key, sid in self._doc_summary.items()
            if sid in self._summaries
        }

    def _stored_passages(self) -> list[KbPassage]:
        got = self._collection.get(include=["documents", "metadatas"])
        rows = zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)
        passages = [
            KbPassage(
                pid,
                str(m["doc_key"]),
                str(m["title"]),
                str(m["source"]),
                str(m["tags"]),
                text,
                str(m["sha"]),
                str(m.get("english") or ""),
                str(m.get("questions") or ""),
            )
            for pid, text, m in rows
        ]
        return sorted(passages, key=lambda p: p.passage_id)


def _summary_id(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:20]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [float(x) / norm for x in vector]
