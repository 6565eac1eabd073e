"""The knowledge index's Chroma access: client selection and the embedding-function adapter.

Imported lazily (chromadb is heavy). `Context.chroma_url` selects a Chroma server, as for block memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chromadb.api.types import Documents, EmbeddingFunction
from chromadb.api.types import Embeddings as ChromaVectors
from langchain_core.embeddings import Embeddings

__all__ = ["ChromaEmbeddings", "kb_client"]


class ChromaEmbeddings(EmbeddingFunction[Documents]):
    """Lets a Chroma collection embed with our model, so Chroma never downloads its default one."""

    def __init__(self, embeddings: Embeddings | None) -> None:
        self._embeddings = embeddings

    def _model(self) -> Embeddings:
        if self._embeddings is None:
            raise RuntimeError("this Chroma collection embeds only when opened through KnowledgeIndex")
        return self._embeddings

    def __call__(self, input: Documents) -> ChromaVectors:  # noqa: A002 - Chroma's parameter name
        """Embed documents."""
        return self._model().embed_documents(list(input))  # type: ignore[return-value]

    def embed_query(self, input: Documents) -> ChromaVectors:  # noqa: A002
        """Embed queries."""
        return [self._model().embed_query(text) for text in input]  # type: ignore[misc]

    @staticmethod
    def name() -> str:
        """Name Chroma records in the collection configuration."""
        return "plangraph-langchain"

    def get_config(self) -> dict[str, Any]:
        """Nothing to persist: the index passes the model in when it opens the collection."""
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChromaEmbeddings:
        """An unbound function: Chroma cannot rebuild the model; KnowledgeIndex always passes it in."""
        return ChromaEmbeddings(None)


def kb_client(data_dir: Path, chroma_url: str | None = None) -> Any:
    """The knowledge index's Chroma: the server at `chroma_url` if given, else `data_dir/kb/chroma`."""
    from memory.vectors import chroma_client

    return chroma_client(Path(data_dir) / "kb" / "chroma", chroma_url or None)
