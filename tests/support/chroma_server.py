"""A throwaway Chroma server for tests: `chroma run` (from the chromadb package) on a free port.

    with chroma_server() as url:            # http://127.0.0.1:<port>
        memory = BlockMemory(path, embeddings, chroma_url=url)

The server stores its data in a temp dir and is stopped (its process group) when the block ends.
The `chroma` command is looked up beside the running Python (the venv), then on PATH; when it is
missing the test is skipped locally and fails in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.local_server import backend_missing, free_port, stop_process, wait_until_ready

__all__ = ["chroma_server", "find_chroma"]


def find_chroma() -> Path | None:
    """The `chroma` CLI of this environment, or None."""
    beside = Path(sys.executable).parent / "chroma"
    if beside.is_file():
        return beside
    found = shutil.which("chroma")
    return Path(found) if found else None


@contextmanager
def chroma_server(timeout: float = 60.0) -> Iterator[str]:
    """Start `chroma run --path <tmp> --host 127.0.0.1 --port <free>`, yield its URL, stop it after."""
    chroma = find_chroma()
    if chroma is None:
        backend_missing("the `chroma` command (package chromadb) is not installed; run `make install`")
        raise AssertionError("unreachable")  # backend_missing always raises
    root = Path(tempfile.mkdtemp(prefix="plangraph-chroma-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = root / "server.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    proc: subprocess.Popen | None = None
    try:
        with open(log, "wb") as out:
            command = [str(chroma), "run", "--path", str(root / "data"), "--host", "127.0.0.1"]
            proc = subprocess.Popen(
                [*command, "--port", str(port)],
                cwd=root,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def beats() -> bool:
            direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
            with direct.open(f"{url}/api/v2/heartbeat", timeout=2) as response:
                return response.status == 200

        wait_until_ready(proc, beats, log, f"Chroma server ({chroma}) on port {port}", timeout)
        yield url
    finally:
        if proc is not None:
            stop_process(proc)
        shutil.rmtree(root, ignore_errors=True)
