"""MiniLM on ONNX Runtime: the packaged model exported once to ONNX, tokenised by `tokenizers`.

Why: importing torch + sentence-transformers costs seconds of CPU at the first embedding (the
cold start of a CLI run), and torch's intra-op threads wait for each other at every operator, so
one busy core slows every call (issue 16). Here a session runs with ONE intra-op thread and no
spin-waiting; parallelism comes from the callers — concurrent turns in a server, or the chunks
of a large batch handed to a few worker threads (ONNX Runtime releases the GIL in `run`). A
thread delayed by another process then delays only its own chunk.

The export (`export_onnx`) needs torch, transformers and the `onnx` package once; the file is
kept in a cache directory keyed by the model files, and written atomically, so processes racing
to export both end with a valid file. Vectors match sentence-transformers' (mean pooling over
the attention mask, L2-normalised; cosine ≥ 0.999, tests/unit/memory/test_embeddings_onnx.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

__all__ = ["ONNX_FILE", "OnnxMiniLM", "export_onnx", "onnx_cache_path"]

log = logging.getLogger("plangraph.memory")

ONNX_FILE = "model.onnx"
_OPSET = 17
_MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length of all-MiniLM-L6-v2
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _model_key(model_path: Path) -> str:
    """Identity of the model files an export was made from (name, size, mtime of each)."""
    parts = []
    for name in ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json"):
        f = model_path / name
        if f.exists():
            st = f.stat()
            parts.append(f"{name}:{st.st_size}:{int(st.st_mtime)}")
    parts.append(f"opset{_OPSET}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def onnx_cache_path(model_path: Path, cache_dir: Path) -> Path:
    """Where the ONNX export of `model_path` lives under `cache_dir`."""
    return cache_dir / "minilm-onnx" / _model_key(model_path) / ONNX_FILE


def export_onnx(model_path: Path, target: Path) -> Path:
    """Export the transformer of `model_path` to `target` (token embeddings, dynamic batch and length)."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar in CLI output

    class _Hidden(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    model = AutoModel.from_pretrained(str(model_path)).eval()
    sample = AutoTokenizer.from_pretrained(str(model_path))(
        ["an example sentence", "and a second, longer example sentence"], padding=True, return_tensors="pt"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    dynamic = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TracerWarnings about shapes baked in; dynamic_axes covers them
            torch.onnx.export(
                _Hidden(model),
                tuple(sample[name] for name in _INPUTS),
                str(tmp),
                input_names=list(_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=dynamic,
                opset_version=_OPSET,
                dynamo=False,
            )
        os.replace(tmp, target)  # atomic: a racing exporter or reader never sees half a file
    finally:
        tmp.unlink(missing_ok=True)
    (target.parent / "source.json").write_text(json.dumps({"model_path": str(model_path)}), encoding="utf-8")
    return target


class OnnxMiniLM:
    """Sentence embeddings of the exported MiniLM: tokenise, run, mean-pool, normalise (numpy)."""

    def __init__(self, model_path: Path, onnx_path: Path, batch_size: int = 32, workers: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        tokenizer.enable_truncation(_MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self.batch_size = batch_size
        self.workers = workers or min(4, len(os.sched_getaffinity(0)))
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _run(self, texts: Sequence[str]) -> Any:
        import numpy as np

        encodings = self._tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        (hidden,) = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of `texts`, in order; batches of similar length, spread over the worker threads."""
        if not texts:
            return []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding per batch
        chunks = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if len(chunks) == 1 or self.workers == 1:
            results = [self._run([texts[i] for i in chunk]) for chunk in chunks]
        else:
            results = list(self._executor().map(lambda c: self._run([texts[i] for i in c]), chunks))
        out: list[list[float]] = [[] for _ in texts]
        for chunk, vectors in zip(chunks, results, strict=True):
            for i, vector in zip(chunk, vectors, strict=True):
                out[i] = vector.tolist()
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="minilm-onnx")
            return self._pool
