"""Real scale-out backends, one per module: PostgreSQL (initdb + postgres) and a Chroma server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.chroma_server import chroma_server
from tests.support.postgres import postgres_server


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="module")
def chroma_url() -> Iterator[str]:
    with chroma_server() as url:
        yield url


def cli_env(data_dir: Path, **variables: str) -> dict[str, str]:
    """The environment of a `plangraph` CLI process: no inherited PLANGRAPH_*, fast embeddings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    env.update(PLANGRAPH_DATA_DIR=str(data_dir), PLANGRAPH_EMBEDDINGS="hash", **variables)
    return env


def cli(
    *args: str, env: dict[str, str], script: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run `plangraph ARGS` (or `script ARGS`) to the end in a fresh Python process."""
    command = [sys.executable, script] if script else [sys.executable, "-m", "plangraph.cli"]
    return subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=timeout)
