"""The plangraph CLI that SIGKILLs itself at one chosen point of scenario S1, for kill/resume tests.

`PLANGRAPH_TEST_KILL_AT` picks the point (unset: never kill):
- `boundary:<k>` — in the executor, once k steps are completed (before it dispatches the next
  step or, for k = number of steps, before the finalizer);
- `<agent>:<start|inside|end>[:<n>]` — in the n-th run of that agent in this process (default:
  its last run in S1, i.e. pv_calc's 2nd): at entry, at its first progress message, or after it
  returned its result (files and memory written, checkpoint not yet);
- `finalizer:end` — after the finalizer computed the summary.
`PLANGRAPH_TEST_KILL_SETTLE` (seconds, default 0) waits before the kill, as when a step has been
running a while; 0 kills before LangGraph's background checkpoint writes have landed.
Every agent run is appended to `PLANGRAPH_TEST_RUN_LOG` as a JSON line {agent, seqNo, pid, status}.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import time
from collections import Counter

import graphs.main as graph_module
import nodes.agents as registry

KILL_AT = os.environ.get("PLANGRAPH_TEST_KILL_AT", "")
RUN_LOG = os.environ.get("PLANGRAPH_TEST_RUN_LOG", "")
SETTLE = float(os.environ.get("PLANGRAPH_TEST_KILL_SETTLE", "0"))
DEFAULT_RUN = {"pv_calc": 2}
_runs: Counter[str] = Counter()


def _die() -> None:
    sys.stdout.flush()
    time.sleep(SETTLE)  # let LangGraph's asynchronous checkpoint writes land first
    os.kill(os.getpid(), signal.SIGKILL)


def _log(record: dict) -> None:
    if RUN_LOG:
        with open(RUN_LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**record, "pid": os.getpid()}) + "\n")


def _target(agent: str) -> tuple[str, int] | None:
    parts = KILL_AT.split(":")
    if len(parts) < 2 or parts[0] != agent:
        return None
    return parts[1], int(parts[2]) if len(parts) > 2 else DEFAULT_RUN.get(agent, 1)


def _wrap(spec: registry.AgentSpec) -> registry.AgentSpec:
    def run(ctx):  # noqa: ANN001, ANN202
        _runs[spec.name] += 1
        target = _target(spec.name)
        here = target is not None and target[1] == _runs[spec.name]
        _log({"agent": spec.name, "seqNo": ctx.seq_no, "status": "started"})
        if here and target[0] == "start":
            _die()
        if here and target[0] == "inside":
            emit = ctx.emit

            def emit_then_die(text: str) -> None:
                emit(text)
                _die()

            ctx.emit = emit_then_die
        result = spec.run(ctx)
        _log({"agent": spec.name, "seqNo": ctx.seq_no, "status": result["status"]})
        if here and target[0] == "end":
            _die()
        return result

    return dataclasses.replace(spec, run=run)


specs = registry.agents()
for _name in list(specs):
    specs[_name] = _wrap(specs[_name])

_executor = graph_module.executor
_make_finalizer = graph_module.make_finalizer


def _killing_executor(state):  # noqa: ANN001, ANN202
    plan = state.get("plan")
    if KILL_AT.startswith("boundary:") and plan is not None:
        if sum(s["status"] == "completed" for s in plan["steps"]) == int(KILL_AT.split(":")[1]):
            _die()
    return _executor(state)


def _killing_make_finalizer(services):  # noqa: ANN001, ANN202
    finalizer = _make_finalizer(services)

    def killing_finalizer(state, runtime):  # noqa: ANN001, ANN202
        update = finalizer(state, runtime)
        if KILL_AT == "finalizer:end":
            _die()
        return update

    return killing_finalizer


graph_module.executor = _killing_executor
graph_module.make_finalizer = _killing_make_finalizer

if __name__ == "__main__":
    from plangraph.cli import main

    sys.exit(main(sys.argv[1:]))
