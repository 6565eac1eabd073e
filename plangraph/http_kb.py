"""The knowledge-base routes: a signed-in user's own documents, and shared ones for admin keys.

    PUT    /kb/documents/{file name}[?shared=true]   body = the file's bytes → the document (201 / 200)
    GET    /kb/documents                              your documents and the shared ones
    DELETE /kb/documents/{id}[?shared=true]           remove one of yours (shared: admin key only)
    GET    /kb/search?q=…&k=5                          what your knowledge agent would find

Shared documents need an admin key (PLANGRAPH_ADMIN_KEYS). Nothing here names a server path.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

from graphs.context import Context
from graphs.services import ServiceHub
from tools.kb.index import KnowledgeIndex
from tools.kb.loaders import SUPPORTED
from tools.kb.uploads import SHARED, KbFileError

__all__ = ["UPLOAD_PREFIX", "add_kb"]

UPLOAD_PREFIX = "/kb/documents/"
_NAME = re.compile(r"[^/\\\x00-\x1f]{1,200}")


def add_kb(app: FastAPI, data_dir: str, hub: Callable[[], ServiceHub], admins: Collection[str]) -> None:
    """Add the /kb routes; `admins` holds the key digests (Guard's rate bucket) allowed to share."""

    def index(request: Request) -> KnowledgeIndex:
        return hub().knowledge(Context(user_id=request.state.user_id, data_dir=data_dir))

    def owner(request: Request, shared: bool) -> str:
        if not shared:
            return str(request.state.user_id)
        bucket = getattr(request.state, "rate_bucket", "")
        if bucket == "anonymous" or bucket in admins:  # anonymous: loopback-only, one user
            return SHARED
        raise HTTPException(
            403, "Shared documents need an admin key (PLANGRAPH_ADMIN_KEYS); yours is not one."
        )

    @app.put(UPLOAD_PREFIX + "{name}")
    async def put_document(name: str, request: Request, shared: bool = False) -> JSONResponse:
        """Add or replace a document (same name, same scope = replace); the body is the file."""
        if not _NAME.fullmatch(name) or name.startswith("."):
            raise HTTPException(422, "File name: 1–200 characters, no '/' or '\\', not starting with '.'.")
        if Path(name).suffix.lower() not in SUPPORTED:
            kinds = ", ".join(sorted(set(SUPPORTED)))
            raise HTTPException(422, f"{name}: unsupported file type; send one of {kinds}.")
        who = owner(request, shared)
        body = await request.body()
        kb = index(request)

        def add() -> dict[str, Any]:
            with tempfile.TemporaryDirectory(prefix="plangraph-kb-") as tmp:
                path = Path(tmp) / f"upload{Path(name).suffix.lower()}"
                path.write_bytes(body)
                return kb.uploads.add(path, who, origin=f"upload:{name}", name=name).as_dict()

        try:
            doc = await asyncio.to_thread(add)
        except KbFileError as error:
            return JSONResponse({"detail": str(error), "name": error.name, "fix": error.fix}, status_code=422)
        return JSONResponse(doc, status_code=201 if doc["status"] == "added" else 200)

    @app.get("/kb/documents")
    async def list_documents(request: Request) -> dict[str, Any]:
        """Your documents and the shared ones."""
        kb = index(request)
        docs = await asyncio.to_thread(kb.uploads.documents, kb.owners)
        return {"documents": [d.as_dict() for d in docs]}

    @app.delete("/kb/documents/{doc_id}")
    async def delete_document(doc_id: str, request: Request, shared: bool = False) -> dict[str, Any]:
        """Remove one of your documents (or, with an admin key and ?shared=true, a shared one)."""
        kb = index(request)
        doc = await asyncio.to_thread(kb.uploads.remove, doc_id, [owner(request, shared)])
        if doc is None:
            scope = "shared documents" if shared else "your documents"
            raise HTTPException(404, f"No document {doc_id} among {scope}; GET /kb/documents lists them.")
        return doc.as_dict()

    @app.get("/kb/search")
    async def search(request: Request, q: str, k: int = 5) -> dict[str, Any]:
        """Passages your knowledge agent would find for `q` (bundled notes, shared and your documents)."""
        kb = index(request)

        def run() -> list[dict[str, Any]]:
            kb.refresh()
            return [
                {
                    "name": Path(h.passage.title).name,
                    "where": h.passage.source,
                    "text": h.passage.text,
                    "score": round(h.score, 4),
                    "relevant": h.relevant,
                }
                for h in kb.search(q, k=max(1, min(k, 20)))
            ]

        return {"query": q, "results": await asyncio.to_thread(run)}
