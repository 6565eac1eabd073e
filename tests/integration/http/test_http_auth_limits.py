"""Auth and limits over a live server: 401 / 403 / 404 across two users, 413, 429, no stack traces."""

from __future__ import annotations

import time

import pytest

from plangraph.auth import RateLimiter, load_api_keys, parse_api_keys
from tests.integration.http.http_support import KEY_ALICE, KEY_BOB, KEYS, Live, human, serve, sse
from tests.integration.scenarios.test_scenarios import S1, S1_ANSWER


@pytest.fixture(scope="module")
def alice_waiting(live) -> dict:
    """Alice's conversation "shared-id" waiting on the S1 question."""
    with live.client(KEY_ALICE) as alice:
        out = alice.post(
            "/plangraph/invoke", json={"input": human(S1)}, headers={"X-Conversation-Id": "shared-id"}
        ).json()["output"]
    assert out["__interrupt__"]
    return out


def test_no_key_or_unknown_key_is_401_everywhere_but_healthz(live):
    for key in (None, "not-a-key"):
        with live.client(key) as client:
            for method, path in (("post", "/plangraph/invoke"), ("get", "/pending"), ("get", "/plans/x")):
                response = getattr(client, method)(
                    path, **({"json": {"input": human(S1)}} if method == "post" else {})
                )
                assert response.status_code == 401, (key, path)
                assert "X-API-Key" in response.json()["detail"] or "Unknown" in response.json()["detail"]
            assert client.get("/healthz").status_code == 200


def test_another_users_conversation_plan_and_pending_are_not_found(live, alice_waiting):
    plan_id = alice_waiting["plan"]["planId"]
    with live.client(KEY_BOB) as bob:
        resumed = bob.post(
            "/plangraph/invoke",
            json={"input": {"resume": S1_ANSWER}},
            headers={"X-Conversation-Id": "shared-id"},
        )
        assert resumed.status_code == 404 and "找不到会话" in resumed.json()["detail"]
        with bob.stream(
            "POST",
            "/plangraph/stream",
            json={"input": {"resume": S1_ANSWER}},
            headers={"X-Conversation-Id": "shared-id"},
        ) as streamed:
            assert streamed.status_code == 404
        assert bob.get(f"/plans/{plan_id}").status_code == 404
        assert plan_id not in str(bob.get("/pending").json())
        # Bob's own "shared-id" is a different conversation: starting it leaves Alice's untouched.
        own = bob.post(
            "/plangraph/invoke", json={"input": human(S1)}, headers={"X-Conversation-Id": "shared-id"}
        )
        assert own.json()["output"]["plan"]["planId"] != plan_id
    with live.client(KEY_ALICE) as alice:
        record = alice.get(f"/plans/{plan_id}").json()
        assert record["status"] == "interrupted" and record["userId"] == "alice"
        pending = [p["planId"] for p in alice.get("/pending").json()["plans"]]
        assert plan_id in pending and own.json()["output"]["plan"]["planId"] not in pending


def test_acting_as_another_user_is_403(live, alice_waiting):
    config = {"configurable": {"thread_id": "shared-id", "user_id": "alice"}}
    with live.client(KEY_BOB) as bob:
        response = bob.post("/plangraph/invoke", json={"input": {"resume": S1_ANSWER}, "config": config})
    assert response.status_code == 403 and "user_id" in response.json()["detail"]
    with live.client(KEY_ALICE) as alice:  # naming yourself is fine
        ok = alice.post("/plangraph/invoke", json={"input": {"resume": S1_ANSWER}, "config": config})
    assert ok.status_code == 200 and "__interrupt__" not in ok.json()["output"]


@pytest.fixture(scope="module")
def limited(http_env, tmp_path_factory):
    """A server allowing 3 requests a minute per key and 2000-byte bodies."""
    from plangraph.server import create_app

    data = tmp_path_factory.mktemp("limited")
    app = create_app(
        data_dir=data, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=3, max_request_bytes=2000
    )
    with serve(app) as url:
        yield Live(url, data)


def test_oversized_body_is_413_with_or_without_content_length(limited):
    big = {"input": human("光伏" * 2000)}
    with limited.client(KEY_ALICE) as alice:
        declared = alice.post("/plangraph/invoke", json=big)
        chunked = alice.post(
            "/plangraph/invoke",
            content=(
                part
                for part in [b'{"input": {"messages": [{"type": "human", "content": "', b"x" * 3000, b'"}]}}']
            ),
            headers={"Content-Type": "application/json"},
        )
    for response in (declared, chunked):
        assert response.status_code == 413
        assert "2000 bytes" in response.json()["detail"]


def test_rate_limit_is_per_key_with_retry_after(limited):
    with limited.client(KEY_BOB) as bob, limited.client(KEY_ALICE) as alice:
        codes = [bob.get("/pending").status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        limited_response = bob.get("/pending")
        assert limited_response.status_code == 429 and int(limited_response.headers["Retry-After"]) >= 1
        assert "requests/minute" in limited_response.json()["detail"]
        assert alice.get("/healthz").status_code == 200  # not counted, not limited
        assert alice.get("/pending").status_code == 200  # another key has its own budget


def test_rate_limiter_refills_over_time():
    limiter = RateLimiter(per_minute=60)  # one a second
    assert all(limiter.acquire("k") == 0 for _ in range(60))
    assert limiter.acquire("k") >= 1
    time.sleep(1.05)
    assert limiter.acquire("k") == 0


def test_internal_errors_are_json_without_traces(live, monkeypatch):
    from plangraph.runner import PlanRunner
    from tools.plans.store import PlanStore

    def broken(*args, **kwargs):
        raise RuntimeError("secret detail /srv/plangraph/db")

    monkeypatch.setattr(PlanStore, "list", broken)
    monkeypatch.setattr(PlanRunner, "run", broken)
    with live.client(KEY_ALICE) as alice:
        rest = alice.get("/pending")
        invoked = alice.post("/plangraph/invoke", json={"input": human(S1)})
        with alice.stream("POST", "/plangraph/stream", json={"input": human(S1)}) as streamed:
            events = sse(streamed)
    for response in (rest, invoked):
        assert response.status_code == 500
        assert response.headers["content-type"] == "application/json"
        assert "ref" in response.json()["detail"]
        assert "secret" not in response.text and "Traceback" not in response.text
    assert ("error", {"status_code": 500, "message": "Internal Server Error"}) in events
    assert "secret" not in str(events)


def test_api_keys_from_env_and_file(tmp_path):
    path = tmp_path / "keys"
    path.write_text("# team keys\nk3:carol\n\nk4 : dave\n", encoding="utf-8")
    env = {"PLANGRAPH_API_KEYS": "k1:alice, k2:bob", "PLANGRAPH_API_KEYS_FILE": str(path)}
    assert load_api_keys(env) == {"k1": "alice", "k2": "bob", "k3": "carol", "k4": "dave"}
    with pytest.raises(ValueError, match="not 'key:user'"):
        parse_api_keys("k1alice")
    with pytest.raises(ValueError, match="cannot be read"):
        load_api_keys({"PLANGRAPH_API_KEYS_FILE": str(tmp_path / "missing")})


def test_app_without_keys_refuses_unless_insecure(http_env, tmp_path):
    from plangraph.server import create_app

    with pytest.raises(ValueError, match="PLANGRAPH_API_KEYS"):
        create_app(data_dir=tmp_path, api_keys={})
    with pytest.raises(ValueError, match="user id"):
        create_app(data_dir=tmp_path, api_keys={"k": "bad user/name"})


def test_a_browser_signs_in_once_and_the_page_calls_carry_the_key_cookie(live):
    import httpx

    # A browser sends its page's Origin with every POST (the server checks it for cookie sessions).
    with httpx.Client(base_url=live.url, timeout=60, headers={"Origin": live.url}) as browser:
        form = browser.get("/login")
        assert form.status_code == 200 and "<form" in form.text
        wrong = browser.post("/login", data={"key": "not-a-key"})
        assert wrong.status_code == 401 and "不正确" in wrong.text and not browser.cookies
        assert browser.get("/pending").status_code == 401
        signed_in = browser.post("/login", data={"key": KEY_ALICE})
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/"
        cookie = signed_in.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert browser.get("/").status_code == 200  # the chat page
        out = browser.post(
            "/plangraph/invoke", json={"input": human(S1)}, headers={"X-Conversation-Id": "browser-1"}
        )
        assert out.status_code == 200 and out.json()["output"]["__interrupt__"]
        pending = browser.get("/pending").json()["plans"]
        assert "browser-1" in {p["conversationId"] for p in pending}  # alice's, through the cookie
    with live.client(KEY_BOB) as bob:
        assert "browser-1" not in {p["conversationId"] for p in bob.get("/pending").json()["plans"]}
