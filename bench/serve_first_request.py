"""A fresh server's first conversation against its second, with and without the warm-up.

    PYTHONPATH=. .venv/bin/python bench/serve_first_request.py [--rounds 3] [--embeddings minilm]

Each round starts `plangraph serve --port 0` twice in fresh data dirs, once with
PLANGRAPH_WARM_UP=0 and once with 1 (plangraph/warm.py), and drives two conversations one after
the other (bench.http_load.drive: S1 → question, resume → report): seconds from the process
start to the first /healthz answer ("ready"), then each request of the first and of the second
conversation. The 1-minute load average is printed beside each run: on a shared machine, wall
time is stretched by the others' load. Prints a table; writes nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.http_load import _start_server, drive


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run(warm: bool, embeddings: str) -> dict[str, float]:
    """One server: ready seconds and the two conversations' request seconds."""
    os.environ["PLANGRAPH_WARM_UP"] = "1" if warm else "0"
    with tempfile.TemporaryDirectory(prefix="bench-first-") as data_dir:
        load = _load()
        start = time.perf_counter()
        proc, base = _start_server(data_dir, embeddings)
        try:
            row = {"load": load, "ready_s": time.perf_counter() - start}
            for n in (0, 1):
                conv = drive(base, "bench-key-a", n)
                if conv.problem:
                    raise RuntimeError(conv.problem)
                row[f"c{n}_s1_s"], row[f"c{n}_resume_s"] = conv.timings[0][1], conv.timings[1][1]
            return row
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def main() -> int:
    """Alternate warm-up off and on for `--rounds`; print every run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embeddings", default="minilm", help="minilm (the default server's) or hash")
    args = parser.parse_args()
    columns = ("ready_s", "c0_s1_s", "c0_resume_s", "c1_s1_s", "c1_resume_s", "load")
    rows: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    print("| warm-up | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for _ in range(args.rounds):
        for warm in (False, True):
            row = run(warm, args.embeddings)
            rows[warm].append(row)
            print(f"| {'on' if warm else 'off'} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |")
    for warm in (False, True):
        med = {c: statistics.median(r[c] for r in rows[warm]) for c in columns}
        print(
            f"| **median {'on' if warm else 'off'}** | " + " | ".join(f"{med[c]:.2f}" for c in columns) + " |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
