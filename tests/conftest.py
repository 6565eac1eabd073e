"""Test-wide setup: offline flags (the Makefile sets them too) and per-test data dirs."""

from __future__ import annotations

import gc
import os
import warnings

import pytest

from tests.support.offline import OFFLINE_ENV

for _name, _value in OFFLINE_ENV.items():
    os.environ.setdefault(_name, _value)
# Servers started by tests skip the warm-up turns (plangraph/warm.py; seconds per start, and most
# tests start one); tests/integration/http/test_http_warm_up.py turns it on.
os.environ.setdefault("PLANGRAPH_WARM_UP", "0")


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A fresh data dir for the run; fast deterministic embeddings (unit tests)."""
    path = tmp_path / "data"
    monkeypatch.setenv("PLANGRAPH_DATA_DIR", str(path))
    monkeypatch.setenv("PLANGRAPH_EMBEDDINGS", "hash")
    monkeypatch.delenv("PLANGRAPH_MODEL", raising=False)
    monkeypatch.delenv("PLANGRAPH_CHECKPOINT_URL", raising=False)
    monkeypatch.delenv("PLANGRAPH_CHROMA_URL", raising=False)
    return path


@pytest.fixture
def model_env(data_dir, monkeypatch):
    """Model mode against a scripted OpenAI-compatible server: `model_env(server, timeout=5, budget=None)`.

    Plan revisions (one model call per completed step, nodes/revise_plan.py) are off unless a test
    asks for them with `revisions=N`: the other tests script every model call of their runs.
    """

    def use(server, timeout: float = 5, budget: int | None = None, revisions: int = 0) -> None:
        monkeypatch.setenv("PLANGRAPH_MODEL", "scripted")
        monkeypatch.setenv("PLANGRAPH_PLAN_REVISIONS", str(revisions))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("PLANGRAPH_MODEL_TIMEOUT", str(timeout))
        if budget is not None:
            monkeypatch.setenv("PLANGRAPH_TOKEN_BUDGET", str(budget))

    return use


@pytest.fixture(autouse=True, scope="module")
def _collect_abandoned_connections():
    """After each test module, collect the client sockets its tests left to the garbage collector.

    Fault tests (timeouts, truncated streams, servers stopped under a client) abandon HTTP
    responses mid-stream; their sockets close only when garbage-collected, which otherwise
    happens during some later test and fails it with an unraisable ResourceWarning.
    """
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
