"""Load over HTTP: 20 concurrent conversations, each S1 with interrupt and resume, no state mixed."""

from __future__ import annotations

from bench.http_load import run_load
from tests.integration.http.http_support import KEY_ALICE, KEY_BOB


def test_twenty_concurrent_conversations_complete_with_their_own_answers(live):
    conversations, _ = run_load(live.url, [KEY_ALICE, KEY_BOB], 20)
    assert [c.problem for c in conversations] == [""] * 20
    assert len({(c.city, c.capacity_kw) for c in conversations}) == 20
    with live.client(KEY_ALICE) as alice, live.client(KEY_BOB) as bob:
        assert alice.get("/pending").json()["plans"] == [] and bob.get("/pending").json()["plans"] == []
