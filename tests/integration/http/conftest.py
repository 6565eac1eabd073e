"""Fixtures of the HTTP tests: offline environment and a live server with two users."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.http.http_support import KEYS, Live, serve


@pytest.fixture(scope="module")
def http_env() -> Iterator[None]:
    """Offline, fast embeddings, no outside configuration leaking into the server."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLANGRAPH_EMBEDDINGS", "hash")
        for name in (
            "PLANGRAPH_MODEL",
            "PLANGRAPH_CHECKPOINT_URL",
            "PLANGRAPH_CHROMA_URL",
            "PLANGRAPH_API_KEYS",
            "PLANGRAPH_API_KEYS_FILE",
            "PLANGRAPH_RATE_LIMIT",
            "PLANGRAPH_MAX_REQUEST_BYTES",
        ):
            mp.delenv(name, raising=False)
        # The shared server sends wrong keys on purpose in many tests; failed-authentication
        # limits are tested with their own servers (test_http_sessions.py).
        mp.setenv("PLANGRAPH_AUTH_FAILURES_PER_CLIENT", "0")
        mp.setenv("PLANGRAPH_AUTH_FAILURES_GLOBAL", "0")
        yield


@pytest.fixture(scope="module")
def live(http_env, tmp_path_factory) -> Iterator[Live]:
    """The API with two users and no rate limit (module-wide: starting a server costs a little)."""
    from plangraph.server import create_app

    data = tmp_path_factory.mktemp("http")
    app = create_app(data_dir=data, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0)
    with serve(app) as url:
        yield Live(url, data)
