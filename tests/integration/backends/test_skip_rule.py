"""A missing backend binary: skip with the reason locally, fail with it in CI (CI=true)."""

from __future__ import annotations

import pytest

import tests.support.chroma_server as chroma_harness
import tests.support.postgres as pg_harness
from tests.support.local_server import backend_missing


def test_missing_backend_skips_locally(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="X is not installed"):
        backend_missing("X is not installed")


@pytest.mark.parametrize("value", ["true", "True", "1"])
def test_missing_backend_fails_in_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="X is not installed.*CI=true"):
        backend_missing("X is not installed")


def test_harnesses_name_the_missing_binary_and_the_fix(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(pg_harness, "find_postgres_bin", lambda: None)
    monkeypatch.setattr(chroma_harness, "find_chroma", lambda: None)
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        with pg_harness.postgres_server():
            pass
    with pytest.raises(pytest.skip.Exception, match="chromadb"):
        with chroma_harness.chroma_server():
            pass
