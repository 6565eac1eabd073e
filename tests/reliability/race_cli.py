"""The plangraph CLI (any subcommand, `serve` too) prepared for race tests between processes.

- `PLANGRAPH_TEST_BARRIER` (a directory): after every import is done, write `ready-<pid>` there
  and wait for a file `go`, so processes whose start-up took different times begin together.
- `PLANGRAPH_TEST_STEP_DELAY` (seconds, default 0): each agent run sleeps this long first, so a
  turn lasts long enough for a rival to arrive while it runs.
- `PLANGRAPH_TEST_RUN_LOG`: every agent run is appended as a JSON line {agent, seqNo, pid, status,
  plan, user, conversation, time}.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time

import nodes.agents as registry
import plangraph.runner  # noqa: F401  (imported now, not after the start signal)
from plangraph.cli import main

BARRIER = os.environ.get("PLANGRAPH_TEST_BARRIER", "")
STEP_DELAY = float(os.environ.get("PLANGRAPH_TEST_STEP_DELAY", "0") or 0)
RUN_LOG = os.environ.get("PLANGRAPH_TEST_RUN_LOG", "")


def _log(record: dict) -> None:
    if RUN_LOG:
        with open(RUN_LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**record, "pid": os.getpid()}) + "\n")


def _wrap(spec: registry.AgentSpec) -> registry.AgentSpec:
    def run(ctx):  # noqa: ANN001, ANN202
        time.sleep(STEP_DELAY)
        result = spec.run(ctx)
        _log(
            {
                "agent": spec.name,
                "seqNo": ctx.seq_no,
                "status": result["status"],
                "plan": ctx.plan_id,
                "user": ctx.user_id,
                "conversation": ctx.conversation_id,
                "time": time.time(),
            }
        )
        return result

    return dataclasses.replace(spec, run=run)


if __name__ == "__main__":
    specs = registry.agents()
    for _name in list(specs):
        specs[_name] = _wrap(specs[_name])
    if BARRIER:
        with open(os.path.join(BARRIER, f"ready-{os.getpid()}"), "w"):
            pass
        while not os.path.exists(os.path.join(BARRIER, "go")):
            time.sleep(0.005)
    sys.exit(main(sys.argv[1:]))
