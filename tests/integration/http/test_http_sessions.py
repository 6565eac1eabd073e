"""Failed-authentication limits, browser sessions, CSRF and logout (issue 12 items 7 and 8).

Before: 2,000 wrong keys in 1.1 s got no 429; the /login bucket was per client address, so one
attacker behind a proxy locked every sign-in out; the cookie held the API key itself; requests
authenticated only by the cookie (and /login) were accepted from any Origin, text/plain and form
bodies included; there was no /logout.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.integration.http.http_support import KEY_ALICE, KEYS, human, serve


@pytest.fixture
def limited(http_env, tmp_path, monkeypatch) -> Iterator[str]:
    """A server allowing 5 failed authentications per client address and 12 in all per minute."""
    from plangraph.server import create_app

    monkeypatch.setenv("PLANGRAPH_AUTH_FAILURES_PER_CLIENT", "5")
    monkeypatch.setenv("PLANGRAPH_AUTH_FAILURES_GLOBAL", "12")
    app = create_app(data_dir=tmp_path, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0)
    with serve(app) as url:
        yield url


def _from(address: str, url: str, **kwargs) -> httpx.Client:
    """A client whose requests come from `address` (any 127.x.y.z is this machine's loopback)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, transport=transport, timeout=60, **kwargs)


def test_wrong_keys_are_limited_per_client_with_back_off_and_valid_keys_still_work(limited):
    with _from("127.0.0.2", limited) as attacker, _from("127.0.0.3", limited) as other:
        codes = [attacker.get("/pending", headers={"X-API-Key": f"guess-{i}"}).status_code for i in range(8)]
        assert codes == [401] * 5 + [429] * 3
        refused = attacker.get("/pending", headers={"X-API-Key": "guess-x"})
        assert int(refused.headers["Retry-After"]) >= 59 and "retry in" in refused.json()["detail"]
        # The valid key from the same address is not locked out; another address is not limited.
        assert attacker.get("/pending", headers={"X-API-Key": KEY_ALICE}).status_code == 200
        assert other.get("/pending", headers={"X-API-Key": "guess-y"}).status_code == 401


def test_wrong_keys_from_many_addresses_hit_the_global_limit_but_valid_keys_pass(limited):
    codes = []
    for n in range(14):
        with _from(f"127.0.1.{n + 1}", limited) as client:
            codes.append(client.get("/pending", headers={"X-API-Key": f"guess-{n}"}).status_code)
    assert codes == [401] * 12 + [429] * 2
    with _from("127.0.1.99", limited) as user:
        assert user.get("/pending", headers={"X-API-Key": KEY_ALICE}).status_code == 200


def test_failed_sign_ins_back_off_without_locking_out_a_valid_key_behind_the_same_proxy(limited):
    with _from("127.0.0.4", limited, headers={"Origin": limited}) as proxy:
        codes = [proxy.post("/login", data={"key": f"guess-{i}"}).status_code for i in range(7)]
        assert codes == [401] * 5 + [429] * 2
        signed_in = proxy.post("/login", data={"key": KEY_ALICE})  # a user behind the same address
        assert signed_in.status_code == 303


def test_the_cookie_is_a_server_side_session_and_cross_site_requests_are_refused(http_env, tmp_path):
    from plangraph.server import create_app

    app = create_app(data_dir=tmp_path, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0)
    with serve(app) as url:
        with httpx.Client(base_url=url, timeout=120, headers={"Origin": url}) as browser:
            # Login CSRF: a form on another site posting the attacker's key is refused.
            forged = browser.post(
                "/login", data={"key": KEY_ALICE}, headers={"Origin": "https://evil.example"}
            )
            assert forged.status_code == 403 and not browser.cookies
            signed_in = browser.post("/login", data={"key": KEY_ALICE})
            assert signed_in.status_code == 303
            session = browser.cookies["plangraph_session"]
            assert KEY_ALICE not in session and len(session) >= 40  # a random id, not the key
            assert "secure" not in signed_in.headers["set-cookie"].lower()  # plain HTTP here

            ok = browser.post(
                "/plangraph/invoke", json={"input": human("你好")}, headers={"X-Conversation-Id": "c1"}
            )
            assert ok.status_code == 200
            for headers in (
                {"Origin": "https://evil.example"},
                {"Origin": "null", "Referer": "https://evil.example/page"},
                {"Origin": "", "Content-Type": "text/plain"},
            ):
                cross = browser.post(
                    "/plangraph/invoke",
                    content='{"input": {"messages": [{"role": "user", "content": "x"}]}}',
                    headers={"Content-Type": "application/json", **headers},
                )
                assert cross.status_code == 403 and "Cross-site" in cross.json()["detail"], headers
            assert browser.get("/pending").status_code == 200  # reading is not a state change

            out = browser.post("/logout")
            assert out.status_code == 303 and out.headers["location"] == "/login"
            assert "plangraph_session" not in browser.cookies
        # The old cookie, replayed after logout, opens nothing: the session ended on the server.
        with httpx.Client(base_url=url, timeout=60, cookies={"plangraph_session": session}) as replay:
            assert replay.get("/pending").status_code == 401
        # Behind a TLS proxy (X-Forwarded-Proto from 127.0.0.1, which uvicorn trusts) the cookie is Secure.
        tls = "https://" + url.split("://", 1)[1]
        signed = httpx.post(
            f"{url}/login",
            data={"key": KEY_ALICE},
            headers={"X-Forwarded-Proto": "https", "Origin": tls},
        )
        assert signed.status_code == 303 and "secure" in signed.headers["set-cookie"].lower()
