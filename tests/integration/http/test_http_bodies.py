"""Malformed request bodies are 422 with a reason, never 500 (issue 12 item 9), and a batch counts
each of its inputs against the rate limit (item 11).

Before: each body below answered 500 (a stream: an `error` event with status 500), and one /batch
with 40 inputs ran 40 turns while the rate limit counted one request.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.integration.http.http_support import KEY_ALICE, KEYS, human, serve

DEEP = "[" * 1000 + "]" * 1000
BODIES = {
    "messages as an object": (
        json.dumps({"input": {"messages": {"role": "user", "content": "x"}}}).encode(),
        "input.messages must be a non-empty list",
    ),
    "invalid UTF-8": (
        b'{"input": {"messages": [{"role": "user", "content": "\xff\xfe"}]}}',
        "not valid UTF-8",
    ),
    "lone surrogate": (
        b'{"input": {"messages": [{"role": "user", "content": "\\ud800"}]}}',
        "lone surrogate",
    ),
    "5,000-digit integer": (
        (
            '{"input": {"resume": ' + "9" * 5000 + '}, "config": {"configurable": {"thread_id": "t"}}}'
        ).encode(),
        "5000 digits",
    ),
    "nested 1,000 deep": (('{"input": {"resume": ' + DEEP + "}}").encode(), "nested deeper than 64"),
}


@pytest.mark.parametrize("endpoint", ["invoke", "stream"])
@pytest.mark.parametrize("name", list(BODIES))
def test_malformed_bodies_are_422_with_the_reason(live, name, endpoint):
    body, reason = BODIES[name]
    with live.client() as client:
        response = client.post(
            f"/plangraph/{endpoint}", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 422, response.text
    assert reason in response.json()["detail"]


@pytest.mark.parametrize("inputs", [["x"], [None], [], "x", [{"messages": {}}]])
def test_batch_inputs_that_are_not_turn_inputs_are_422(live, inputs):
    with live.client() as client:
        response = client.post("/plangraph/batch", json={"inputs": inputs})
    assert response.status_code == 422, response.text
    assert "inputs" in response.json()["detail"]


def test_a_batch_counts_each_input_against_the_rate_limit(http_env, tmp_path):
    from plangraph.server import create_app

    app = create_app(data_dir=tmp_path, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=5)
    with (
        serve(app) as url,
        httpx.Client(base_url=url, headers={"X-API-Key": KEY_ALICE}, timeout=120) as client,
    ):
        too_big = client.post("/plangraph/batch", json={"inputs": [human("你好")] * 6})
        assert too_big.status_code == 429 and "Send fewer inputs" in too_big.json()["detail"]
        three = client.post("/plangraph/batch", json={"inputs": [human("你好")] * 3})
        assert three.status_code == 200 and len(three.json()["output"]) == 3
        again = client.post("/plangraph/batch", json={"inputs": [human("你好")] * 3})  # 2 of 5 left
        assert again.status_code == 429 and int(again.headers["Retry-After"]) >= 1
