"""The packaged MiniLM on ONNX Runtime gives the same vectors as sentence-transformers on torch.

Real parts: the packaged model, a real ONNX export into a temporary cache dir, onnxruntime.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from memory.embeddings import MiniLMEmbeddings

pytestmark = pytest.mark.slow

TEXTS = [
    "What payback period did we get for the Riverside rooftop?",
    "杭州余杭区 工商业光伏 装机容量500kW 电价0.65元",
    "mixed 中文 and English: IRR 8.5% over 25 years",
    "",
    "x",
    "inverter " * 400,  # longer than 256 tokens: truncated the way sentence-transformers does
    *[f"block {i}: module price {i * 7 % 100} yuan per watt, loan rate {i % 9}%" for i in range(90)],
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(onnx, torch) embedders of the same packaged model; the ONNX one exports into a fresh dir."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    cache = tmp_path_factory.mktemp("model-cache")
    onnx = MiniLMEmbeddings(backend="onnx", cache_dir=cache)
    yield onnx, MiniLMEmbeddings(backend="torch"), cache
    torch.set_num_threads(threads)


def test_onnx_vectors_match_torch_and_keep_order(pair):
    onnx, torch_model, cache = pair
    assert onnx.active_backend == "onnx" and torch_model.active_backend == "torch"
    assert list(cache.glob("minilm-onnx/*/model.onnx")), "the export was not written to the cache dir"
    a = np.array(onnx.embed_documents(TEXTS))  # 96 texts: several batches on the worker threads
    b = np.array(torch_model.embed_documents(TEXTS))
    assert a.shape == b.shape == (len(TEXTS), 384)
    cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert cosine.min() >= 0.999, f"lowest cosine {cosine.min():.5f} at text {int(cosine.argmin())}"
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)  # normalised: dot = cosine
    query = np.array(onnx.embed_query(TEXTS[0]))
    assert float(query @ b[0]) >= 0.999
    # Order kept across length-sorted batches: each text is nearest to its own torch vector.
    assert (np.argmax(a @ b.T, axis=1)[6:] == np.arange(6, len(TEXTS))).all()


def test_second_embedder_reuses_the_export(pair):
    _, _, cache = pair
    [export] = cache.glob("minilm-onnx/*/model.onnx")
    mtime = export.stat().st_mtime_ns
    again = MiniLMEmbeddings(backend="onnx", cache_dir=cache)
    assert len(again.embed_query("reuse")) == 384
    assert export.stat().st_mtime_ns == mtime


def test_unusable_cache_dir_falls_back_to_torch_with_a_log_line(tmp_path, caplog):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache dir should be")
    auto = MiniLMEmbeddings(cache_dir=blocked)
    with caplog.at_level(logging.WARNING, logger="plangraph.memory"):
        assert auto.active_backend == "torch"
    assert "using torch" in caplog.text
    assert len(auto.embed_query("still works")) == 384
    with pytest.raises(OSError):
        MiniLMEmbeddings(backend="onnx", cache_dir=blocked).embed_query("no fallback asked for")


def test_unknown_backend_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="'auto', 'onnx' or 'torch'"):
        MiniLMEmbeddings(backend="tensorrt")
