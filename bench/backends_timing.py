"""S1 (run → question → resume → report) per backend: SQLite vs PostgreSQL checkpoints, local vs server Chroma.

    PYTHONPATH=. .venv/bin/python bench/backends_timing.py [--repeat 5]

Starts a throwaway PostgreSQL and Chroma server with the test harnesses (tests/support/), then
runs S1 `--repeat` times per configuration in this process, each time on a fresh conversation
and data dir, with hash embeddings so the backends, not the model, dominate. Prints a markdown
table of median and max seconds per conversation (run + resume) and the harness start-up times.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
import uuid

from plangraph.runner import PlanRunner
from tests.support.chroma_server import chroma_server
from tests.support.postgres import postgres_server

S1 = "帮我生成一份光伏经济测算报告"
S1_ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"


def _conversation(checkpoint_url: str) -> float:
    with tempfile.TemporaryDirectory() as data:
        start = time.perf_counter()
        with PlanRunner.open(
            user_id="bench",
            conversation_id=uuid.uuid4().hex[:8],
            data_dir=data,
            checkpoint_url=checkpoint_url,
        ) as runner:
            asked = runner.run(S1)
            assert asked.interrupt is not None
            done = runner.resume(S1_ANSWER)
            assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["PLANGRAPH_EMBEDDINGS"] = "hash"
    os.environ.pop("PLANGRAPH_MODEL", None)
    _conversation("")  # warm-up: imports, registry, templates

    started = time.perf_counter()
    with postgres_server() as pg_url:
        pg_start = time.perf_counter() - started
        started = time.perf_counter()
        with chroma_server() as chroma_url:
            chroma_start = time.perf_counter() - started
            rows = []
            for checkpoints, url in (("SQLite file", ""), ("PostgreSQL", pg_url)):
                for vectors, chroma in (("Chroma local dir", None), ("Chroma server", chroma_url)):
                    if chroma:
                        os.environ["PLANGRAPH_CHROMA_URL"] = chroma
                    else:
                        os.environ.pop("PLANGRAPH_CHROMA_URL", None)
                    times = [_conversation(url) for _ in range(args.repeat)]
                    rows.append((checkpoints, vectors, statistics.median(times), max(times)))
    print(f"{args.repeat} conversations per row; {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"harness start: PostgreSQL {pg_start:.1f} s (initdb + start + createdb), Chroma {chroma_start:.1f} s\n"
    )
    print("| checkpoints | vectors | median s / S1 | max s |")
    print("| --- | --- | --- | --- |")
    for checkpoints, vectors, median, worst in rows:
        print(f"| {checkpoints} | {vectors} | {median:.2f} | {worst:.2f} |")


if __name__ == "__main__":
    main()
