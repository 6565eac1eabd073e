"""Where one S1 CLI run spends its time: a sampling profile of every thread, to the first chunk or the end.

    PYTHONPATH=. .venv/bin/python bench/s1_profile.py [--until first-chunk|end] [--top 60]

Runs `plangraph run S1 --answer … --json` in this process (fresh data dir, the configured
embeddings; set PLANGRAPH_EMBEDDINGS=minilm for a new user's default) while a thread samples the
stacks of all other threads every 5 ms (py-spy is not needed). A sample counts when its innermost
frame is not a wait (locks, queues, futures). Prints the share of samples each function was on
the stack for, and the CPU / wall seconds to the stop point. Sampling happens under the GIL, so
shares of GIL-bound code are upper bounds; read it as "where to look", not as exact CPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from types import FrameType

S1 = "帮我生成一份光伏经济测算报告"
ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
_WAITS = (":wait", ":_wait_for_tstate_lock", ":acquire", ":select", ":result", ":get")


def _name(frame: FrameType) -> str:
    path = frame.f_code.co_filename.split("site-packages/")[-1].replace(os.getcwd() + "/", "")
    return f"{path}:{frame.f_code.co_name}"


class Sampler(threading.Thread):
    """Counts, every 5 ms, each function on the stack of every other running (not waiting) thread."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.on_stack: Counter[str] = Counter()
        self.samples = 0
        self.running = True

    def run(self) -> None:
        while self.running:
            for ident, frame in sys._current_frames().items():
                if ident == self.ident:
                    continue
                stack = []
                f: FrameType | None = frame
                while f is not None:
                    stack.append(_name(f))
                    f = f.f_back
                top = stack[0]
                if top.endswith(_WAITS) or "threading.py" in top or "queue.py" in top:
                    continue
                self.samples += 1
                self.on_stack.update(set(stack))
            time.sleep(0.005)


def main() -> None:
    """Sample one S1 run and print the profile."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--until", choices=["first-chunk", "end"], default="end")
    ap.add_argument("--top", type=int, default=60)
    args = ap.parse_args()
    wall, cpu = time.perf_counter(), time.process_time()
    load = open("/proc/loadavg").read().split()[0]
    sampler = Sampler()
    sampler.start()
    import plangraph.cli as cli  # imported under the sampler: imports are part of the cold start

    stop_on = "chunk" if args.until == "first-chunk" else "final"
    shown = cli._Printer.event

    def event(self: cli._Printer, kind: str, **fields: object) -> None:
        if kind == stop_on:
            sampler.running = False
            sampler.join()
            spent = (time.process_time() - cpu, time.perf_counter() - wall)
            total = max(sampler.samples, 1)
            print(
                f"to {args.until}: {spent[0]:.2f} s CPU, {spent[1]:.2f} s wall; load average {load}; "
                f"{total} samples",
                file=sys.stderr,
            )
            for name, count in sampler.on_stack.most_common(args.top):
                print(f"{100 * count / total:5.1f}%  {name}", file=sys.stderr)
            os._exit(0)
        shown(self, kind, **fields)

    cli._Printer.event = event  # type: ignore[method-assign]
    data = tempfile.mkdtemp(prefix="plangraph-profile-")
    cli.main(["--data-dir", data, "run", S1, "--answer", ANSWER, "--json", "--conversation", "profile"])


if __name__ == "__main__":
    main()
