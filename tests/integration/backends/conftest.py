"""Real scale-out backends, one per module: PostgreSQL (initdb + postgres) and a Chroma server."""

from __future__ import annotations

from collections.abc import Iterator

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
