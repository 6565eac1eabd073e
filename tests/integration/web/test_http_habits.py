"""Server habits a user notices: access log, sign-in redirect, no server paths, HTTP-worded errors."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import httpx

from tests.integration.http.http_support import KEY_ALICE, human, sse
from tests.support.local_server import listening_url

ROOT = Path(__file__).resolve().parents[3]
ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"


def test_every_request_gets_one_access_line_with_the_user_and_never_the_key(site, caplog):
    caplog.set_level(logging.INFO, logger="plangraph.access")
    with httpx.Client(base_url=site.url, timeout=30) as client:
        assert client.get("/pending", headers={"X-API-Key": KEY_ALICE}).status_code == 200
        assert client.get("/plans/nope?key=" + KEY_ALICE, headers={"X-API-Key": KEY_ALICE}).status_code == 404
        assert client.get("/pending").status_code == 401
    lines = [r.getMessage() for r in caplog.records if r.name == "plangraph.access"]
    assert re.fullmatch(r"GET /pending 200 \d+\.\dms user=alice", lines[0]), lines
    assert re.fullmatch(r"GET /plans/nope 404 \d+\.\dms user=alice", lines[1]), lines
    assert re.fullmatch(r"GET /pending 401 \d+\.\dms user=-", lines[2]), lines
    assert len(lines) == 3 and not any(KEY_ALICE in line for line in lines)


def test_a_browser_without_a_session_is_sent_to_sign_in_but_api_calls_get_401(site):
    with httpx.Client(base_url=site.url, timeout=30) as anonymous:
        page = anonymous.get("/", headers={"Accept": "text/html"})
        assert page.status_code == 303 and page.headers["location"] == "/login"
        assert anonymous.get("/pending").status_code == 401
        assert anonymous.get("/conversations").status_code == 401
        signed_in = anonymous.post("/login", data={"key": KEY_ALICE})
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/"
        page = anonymous.get("/")
        assert page.status_code == 200 and 'id="composer"' in page.text


def test_nothing_sent_over_http_names_a_path_of_the_server(site):
    root = str(site.data_dir)
    config = {"configurable": {"thread_id": "paths-1"}}
    with httpx.Client(base_url=site.url, headers={"X-API-Key": KEY_ALICE}, timeout=120) as alice:
        first = alice.post(
            "/plangraph/invoke", json={"input": human("帮我生成一份光伏经济测算报告"), "config": config}
        )
        with alice.stream(
            "POST", "/plangraph/stream", json={"input": {"resume": ANSWER}, "config": config}
        ) as r:
            events = sse(r)
        result = events[-2][1]
        sent = [first.text, json.dumps(events, ensure_ascii=False)]
        sent += [alice.get(f"/plans/{result['plan']['planId']}").text, alice.get("/pending").text]
        sent += [alice.get("/conversations").text, alice.get("/conversations/paths-1").text]
        sent += [alice.get("/conversations/paths-1/plan.svg").text]
        again = alice.post(
            "/plangraph/stream_events",
            json={"input": human("其他参数不变，将地址更换到上海市后重新进行测算"), "config": config},
        )
        sent.append(again.text)
        report = alice.get(next(u for u in result["artifacts"] if u.endswith("_report.html")))
    assert report.status_code == 200 and "内部收益率" in report.text
    assert not [text[:200] for text in sent if root in text]
    # Step outputs and the summary name the files by their URL instead.
    assert result["artifacts"] and all(u.startswith("/artifacts/paths-1/") for u in result["artifacts"])
    assert "/artifacts/paths-1/" in result["summary"]
    chunk_data = [
        d["agentChatResponse"]["data"] for e, d in events if e == "data" and "agentChatResponse" in d
    ]
    files = [f for d in chunk_data for f in d.get("artifacts", [])]
    assert files and all(f.startswith("/artifacts/paths-1/") for f in files), files


def test_http_errors_say_what_to_do_over_http_not_on_the_command_line(site):
    with httpx.Client(base_url=site.url, headers={"X-API-Key": KEY_ALICE}, timeout=120) as alice:
        missing = alice.post(
            "/plangraph/invoke",
            json={"input": {"resume": "x"}, "config": {"configurable": {"thread_id": "none-1"}}},
        )
        config = {"configurable": {"thread_id": "done-1"}}
        alice.post(
            "/plangraph/invoke", json={"input": human("帮我生成一份光伏经济测算报告"), "config": config}
        )
        alice.post("/plangraph/invoke", json={"input": {"resume": ANSWER}, "config": config})
        finished = alice.post("/plangraph/invoke", json={"input": {"resume": "再算一次"}, "config": config})
    assert missing.status_code == 404 and finished.status_code == 409
    for detail in (missing.json()["detail"], finished.json()["detail"]):
        assert (
            "plangraph run" not in detail
            and "plangraph resume" not in detail
            and "--conversation" not in detail
        )
    assert "不带会话 ID 发送新请求" in missing.json()["detail"]


def test_the_playground_that_could_not_start_is_no_longer_advertised(site):
    # LangServe's playground form cannot build plangraph's input, and its Start button posted to a
    # /stream_log that was not served: people get the chat page at / instead.
    with httpx.Client(base_url=site.url, headers={"X-API-Key": KEY_ALICE}, timeout=30) as alice:
        assert alice.get("/plangraph/playground/").status_code == 404
        assert alice.post("/plangraph/stream_log", json={"input": human("x")}).status_code == 404
        assert alice.get("/").status_code == 200
    with httpx.Client(base_url=site.url, timeout=30) as anonymous:
        assert anonymous.get("/plangraph/playground/").status_code == 401  # no longer a public path


def test_plangraph_serve_logs_requests_and_uses_the_data_dir_flag(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PLANGRAPH_API_KEYS": "k-serve-123:alice", "PLANGRAPH_EMBEDDINGS": "hash"}
    cmd = [sys.executable, "-m", "plangraph.cli", "--data-dir", str(tmp_path / "d"), "serve", "--port", "0"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        url = listening_url(proc)  # printed once it answers
        assert httpx.get(f"{url}/pending", headers={"X-API-Key": "k-serve-123"}).status_code == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert re.search(r"GET /pending 200 \d+\.\dms user=alice", err), err
    assert "k-serve-123" not in err
    assert (tmp_path / "d" / "plans.sqlite").is_file()
