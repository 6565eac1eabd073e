"""What an offline first turn loads: not the model's client, Chroma, pydot or the embedder (issue 14 item 5).

Loading them cost 1.5 s of CPU before the first streamed chunk (openai 0.5 s, chromadb 0.4 s,
pydot's grammar 0.3 s) and jieba's whole dictionary another 0.6 s. Times are measured by
bench/cold_start.py, not here; these tests pin what is (not) imported and that the lazy
pieces still answer as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import openai
import psycopg

from tools.faults import is_service_fault, model_errors, retryable, transient_errors

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("openai", "langchain_openai", "chromadb", "pydot", "pyparsing", "psycopg")
# the embedder and the charts: needed once an agent has a result, never before the first question
LATER = ("onnxruntime", "torch", "sentence_transformers", "matplotlib")
FIRST_TURN = """
import json, sys
from plangraph.runner import PlanRunner
with PlanRunner.open(user_id="u", conversation_id="cold", data_dir=sys.argv[1]) as runner:
    chunks = []
    outcome = runner.run("帮我生成一份光伏经济测算报告", on_chunk=chunks.append)
    from memory.text import _jieba
    print(json.dumps({
        "question": bool(outcome.interrupt),
        "chunks": len(chunks),
        "loaded": [m for m in %r if m in sys.modules],
        "freq": type(_jieba().FREQ).__name__,
    }))
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    return {**env, "PLANGRAPH_EMBEDDINGS": "minilm"}


def test_importing_the_runner_loads_no_model_client_vector_store_or_dot_parser():
    code = f"import sys, plangraph.runner; print([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_new_conversations_first_turn_streams_without_them_and_cuts_chinese_from_the_disk_table(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", FIRST_TURN % (HEAVY + LATER,), str(tmp_path)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["question"] and seen["chunks"] >= 1
    assert seen["loaded"] == []
    assert seen["freq"] == "DiskFreq"
    assert not (tmp_path / "memory" / "chroma").exists()  # opened when a first vector is stored


def test_the_transient_and_model_error_tuples_include_openais_classes_once_it_is_loaded():
    transient = transient_errors()
    for cls in (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError):
        assert cls in transient
    assert openai.APIError in model_errors() and openai.BadRequestError not in transient
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    assert retryable(openai.APIConnectionError(request=request))
    limited = openai.RateLimitError("slow down", response=httpx.Response(429, request=request), body=None)
    assert retryable(limited)
    refused = openai.BadRequestError("bad", response=httpx.Response(400, request=request), body=None)
    assert not retryable(refused) and is_service_fault(refused)
    assert is_service_fault(psycopg.OperationalError("server closed the connection"))
    assert not is_service_fault(ValueError("our bug"))


def test_warm_up_loads_the_local_embedding_model_in_the_background_and_only_that(tmp_path):
    """While a person types an answer, the model the next turn needs is loaded (CLI: before input)."""
    code = """
import sys
from graphs.services import embeddings_for
from plangraph.runner import PlanRunner
with PlanRunner.open(user_id="u", conversation_id="w", data_dir=sys.argv[1]) as runner:
    embeddings = embeddings_for(runner.context)
    assert not embeddings.loaded
    thread = runner.warm_up()
    thread.join(timeout=240)
    assert embeddings.loaded and runner.warm_up() is None  # loaded once, nothing left to warm
    print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, env=_env(), capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    hashed = "from plangraph.runner import PlanRunner\n"
    hashed += (
        "with PlanRunner.open(user_id='u', conversation_id='h', data_dir=__import__('sys').argv[1]) as r:\n"
    )
    hashed += "    print(r.warm_up())\n"
    done = subprocess.run(
        [sys.executable, "-c", hashed, str(tmp_path)],
        cwd=ROOT,
        env={**_env(), "PLANGRAPH_EMBEDDINGS": "hash"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stderr[-2000:]
