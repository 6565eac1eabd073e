"""`plangraph serve` warms up before it answers: offline turns in a throwaway data dir (plangraph/warm.py)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import httpx

from graphs.context import Context
from plangraph import warm
from tests.support.local_server import listening_url, stop_process
from tests.support.openai_server import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[3]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGRAPH_", "OPENAI_"))}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {
        **env,
        "PLANGRAPH_DATA_DIR": str(tmp_path / "data"),
        "PLANGRAPH_API_KEYS": "k1:alice",
        "TMPDIR": str(tmp_path / "tmp"),  # where the throwaway data dir goes (and must be gone from)
        **extra,
    }


def test_the_server_warms_up_offline_before_it_answers_and_leaves_nothing_behind(tmp_path):
    """Model and embeddings on an endpoint: the warm-up calls neither, and no trace reaches the data dir."""
    with ScriptedOpenAIServer([]) as model:
        env = _env(
            tmp_path,
            PLANGRAPH_WARM_UP="1",
            PLANGRAPH_MODEL="scripted",
            PLANGRAPH_EMBEDDINGS="openai",
            OPENAI_BASE_URL=model.base_url,
            OPENAI_API_KEY="test",
        )
        cmd = [sys.executable, "-m", "plangraph.cli", "serve", "--port", "0"]
        proc = subprocess.Popen(
            cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        try:
            before: list[str] = []  # the log until the server says where it listens
            url = listening_url(proc, before)
            with httpx.Client(base_url=url, headers={"X-API-Key": "k1"}, timeout=30) as client:
                assert client.get("/healthz").status_code == 200  # "listening on" comes once it answers
                assert client.get("/conversations").json()["conversations"] == []
            assert model.requests == [] and model.embedding_requests == []
            assert list((tmp_path / "tmp").iterdir()) == []  # the throwaway data dir is removed
        finally:
            stop_process(proc)
            assert proc.stderr is not None
            err = proc.stderr.read()
            proc.stderr.close()
    assert any("warmed up in" in line for line in before), before
    assert "warm-up turn failed" not in err and "Traceback" not in err, err
    for path in (tmp_path / "data").rglob("*"):  # the warm-up's user and conversations are nowhere
        assert not path.is_file() or b"warm-up" not in path.read_bytes(), path


def test_a_failing_warm_up_is_logged_and_the_server_still_starts(tmp_path, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("no graph today")

    monkeypatch.setattr(warm, "build_graph", broken)
    with caplog.at_level(logging.INFO, logger="plangraph.warm"):
        seconds = warm.warm_up(Context(data_dir=str(tmp_path / "data"), embeddings="hash"))
    assert seconds >= 0 and "warm-up turn failed" in caplog.text and "warmed up in" in caplog.text
    assert not (tmp_path / "data").exists()  # the server's data dir is never used


def test_an_unknown_warm_up_setting_is_named(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "plangraph.cli", "serve", "--port", "0"],
        env=_env(tmp_path, PLANGRAPH_WARM_UP="maybe"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "PLANGRAPH_WARM_UP='maybe'" in done.stderr, done.stderr
