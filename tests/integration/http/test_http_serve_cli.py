"""`plangraph serve` as a user runs it: refuses to start without keys, serves with them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.integration.http.http_support import human, serve
from tests.support.local_server import listening_url

ROOT = Path(__file__).resolve().parents[3]


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    return {**env, "PLANGRAPH_DATA_DIR": str(data_dir), "PLANGRAPH_EMBEDDINGS": "hash", **extra}


def _serve(*args: str, env: dict[str, str]) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "plangraph.cli", "serve", *args]
    return subprocess.Popen(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize(
    ("args", "expected"),
    [((), "PLANGRAPH_API_KEYS"), (("--insecure-no-auth", "--host", "0.0.0.0"), "只能用于本机地址")],
)
def test_serve_refuses_to_start_without_keys_or_off_loopback(http_env, capsys, args, expected):
    from plangraph.cli import main

    assert main(["serve", "--port", "0", *args]) == 2
    assert expected in capsys.readouterr().err


def test_serve_with_keys_listens_on_a_free_port(tmp_path):
    proc = _serve("--port", "0", env=_env(tmp_path, PLANGRAPH_API_KEYS="k1:alice"))
    try:
        url = listening_url(proc)
        assert httpx.get(f"{url}/healthz", timeout=2).status_code == 200  # printed once it answers
        assert httpx.get(f"{url}/pending").status_code == 401
        assert httpx.get(f"{url}/pending", headers={"X-API-Key": "k1"}).json() == {"plans": []}
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode in (0, -15), err  # uvicorn re-raises SIGTERM after a graceful shutdown
    assert "Traceback" not in err


def test_insecure_no_auth_serves_everyone_as_the_default_user(http_env, tmp_path, monkeypatch):
    from plangraph.server import create_app

    monkeypatch.setenv("PLANGRAPH_USER_ID", "solo")
    app = create_app(data_dir=tmp_path, checkpoint_url="", api_keys={}, insecure_no_auth=True)
    with serve(app) as url, httpx.Client(base_url=url, timeout=120) as anyone:
        out = anyone.post("/plangraph/invoke", json={"input": human("帮我生成一份光伏经济测算报告")}).json()[
            "output"
        ]
        record = anyone.get(f"/plans/{out['plan']['planId']}").json()
    assert record["userId"] == "solo" and record["status"] == "interrupted"
