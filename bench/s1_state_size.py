"""How big scenario S1 leaves the plan in graph state, and how many checkpoint bytes the run writes.

    PYTHONPATH=. .venv/bin/python bench/s1_state_size.py                  # this checkout
    PYTHONPATH=. .venv/bin/python bench/s1_state_size.py --ref b5ef28b    # and an older commit, side by side

S1 = "帮我生成一份光伏经济测算报告", the question, the seed answer: three steps (pv_calc →
sensitivity → report) run through `PlanRunner` on a SQLite checkpointer in a fresh data dir
(hash embeddings: the sizes do not depend on the embedder). Reported: the plan in the final state
(as LangGraph's checkpoint serializer stores it — msgpack —, as UTF-8 JSON, and per step), and the checkpoint + metadata + pending-write bytes the whole run
left in `checkpoints.sqlite`. `--ref` checks the commit out into a temporary worktree and runs the
same measurement there in a subprocess, so both columns come from one run on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

S1 = "帮我生成一份光伏经济测算报告"
ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
    "LANGSMITH_TRACING": "false",
    "ANONYMIZED_TELEMETRY": "False",
    "MPLBACKEND": "Agg",
    "PLANGRAPH_EMBEDDINGS": "hash",
}


def _utf8(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode())


def measure() -> dict:
    """Run S1 here (the repository on sys.path) and return the sizes."""
    from plangraph.runner import PlanRunner

    with tempfile.TemporaryDirectory() as tmp:
        with PlanRunner.open(user_id="bench", conversation_id="s1", data_dir=tmp) as runner:
            runner.run(S1)
            done = runner.resume(ANSWER)
            plan = runner.current_plan()
        assert done.plan is not None and plan is not None
        with sqlite3.connect(Path(tmp) / "checkpoints.sqlite") as conn:
            (ck,) = conn.execute(
                "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints"
            ).fetchone()
            (wr,) = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        return {
            "statuses": [s["status"] for s in plan["steps"]],
            "plan_bytes": _utf8(plan),
            "plan_serialized": len(JsonPlusSerializer().dumps_typed(plan)[1]),
            "step_bytes": {s["agentName"]: _utf8(s) for s in plan["steps"]},
            "checkpoint_bytes": int(ck) + int(wr),
        }


def _at_ref(ref: str) -> dict:
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "add", "--detach", str(tree), ref],
            check=True,
            capture_output=True,
        )
        try:
            script = (
                f"import sys; sys.path.insert(0, {str(tree)!r}); sys.path.insert(0, {str(repo / 'bench')!r});"
                "import json, s1_state_size as b; print(json.dumps(b.measure()))"
            )
            out = subprocess.run(
                [sys.executable, "-c", script],
                cwd=tree,
                env={**os.environ, **OFFLINE, "PYTHONPATH": str(tree)},
                check=True,
                capture_output=True,
                text=True,
            )
            return json.loads(out.stdout.strip().splitlines()[-1])
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", help="also measure this git commit, side by side")
    args = ap.parse_args()
    os.environ.update(OFFLINE)
    columns = {"this checkout": measure()}
    if args.ref:
        columns[args.ref] = _at_ref(args.ref)
    names = list(columns)
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| step statuses | " + " | ".join(" ".join(c["statuses"]) for c in columns.values()) + " |")
    print(
        "| S1 plan in state, as UTF-8 JSON (bytes) | "
        + " | ".join(f"{c['plan_bytes']:,}" for c in columns.values())
        + " |"
    )
    print(
        "| S1 plan in state, as the checkpointer stores it (bytes) | "
        + " | ".join(f"{c.get('plan_serialized', 0):,}" for c in columns.values())
        + " |"
    )
    for agent in columns[names[0]]["step_bytes"]:
        print(
            f"| · step {agent} (bytes) | "
            + " | ".join(f"{c['step_bytes'].get(agent, 0):,}" for c in columns.values())
            + " |"
        )
    print(
        "| checkpoint bytes of the run | "
        + " | ".join(f"{c['checkpoint_bytes']:,}" for c in columns.values())
        + " |"
    )


if __name__ == "__main__":
    main()
