"""Executor overhead per plan step vs a bare LangGraph graph of the same shape (same SqliteSaver file).

    PYTHONPATH=. .venv/bin/python bench/graph_overhead.py [--short 1 --long 21 --repeat 7]

Both graphs loop dispatcher → worker (a `Send`) → dispatcher once per step and checkpoint every
superstep in one SqliteSaver file. plangraph runs a template plan of N steps of a registered agent
that returns a completed AgentExecResult at once (no memory write); the bare graph keeps a list of
step statuses. Cost per step = (median run time at `--long` steps − at `--short` steps) / the
difference, so the fixed per-run nodes (remember, planner, finalizer) cancel out. Target: ≤ 2×.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send
from typing_extensions import TypedDict

from bench.graph_common import Timer, agent, chain_template, done, machine, sqlite_saver, table, write_section


def _set_status(current: list[str] | None, update: dict[int, str] | list[str]) -> list[str]:
    if isinstance(update, list):
        return list(update)
    out = list(current or [])
    for i, status in update.items():
        out[i] = status
    return out


class BareState(TypedDict):
    steps: Annotated[list[str], _set_status]


class WorkInput(TypedDict):
    i: int


def _dispatch(state: BareState) -> Command:
    ready = [i for i, s in enumerate(state["steps"]) if s == "not_started"]
    if not ready:
        return Command(goto=END)
    i = ready[0]
    return Command(update={"steps": {i: "in_progress"}}, goto=[Send("work", {"i": i})])


def _work(payload: WorkInput) -> dict[str, Any]:
    return {"steps": {payload["i"]: "completed"}}


def bare_graph(saver: Any) -> Any:
    b = StateGraph(BareState)
    b.add_node("dispatch", _dispatch, destinations=("work", END))
    b.add_node("work", _work)
    b.add_edge(START, "dispatch")
    b.add_edge("work", "dispatch")
    return b.compile(checkpointer=saver)


def plangraph_graph(saver: Any, lengths: list[int]) -> Any:
    from graphs.main import build_graph

    specs = {"noop": agent("noop", lambda ctx: done(ctx))}
    templates = [chain_template(f"benchmark chain of {n} steps", "noop", n) for n in lengths]
    return build_graph(checkpointer=saver, specs=specs, templates=templates)


def time_bare(graph: Any, n: int) -> float:
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    with Timer() as t:
        out = graph.invoke({"steps": ["not_started"] * n}, config)
    assert out["steps"] == ["completed"] * n
    return t.seconds


def time_plangraph(graph: Any, n: int, data_dir: Path) -> float:
    from graphs.context import Context

    thread = uuid.uuid4().hex
    config = {"configurable": {"thread_id": thread}}
    context = Context(user_id="bench", conversation_id=thread, data_dir=str(data_dir))
    request = {"messages": [{"role": "user", "content": f"benchmark chain of {n} steps"}]}
    with Timer() as t:
        out = graph.invoke(request, config, context=context)
    steps = out["plan"]["steps"]
    assert len(steps) == n and all(s["status"] == "completed" for s in steps), steps
    return t.seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--short", type=int, default=1)
    ap.add_argument("--long", type=int, default=21)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="plangraph-bench-overhead-"))
    saver = sqlite_saver(work / "checkpoints.sqlite")  # one file for both graphs
    bare, plan = bare_graph(saver), plangraph_graph(saver, [args.short, args.long])
    data_dir = work / "data"
    for n in (args.short, args.long):  # warm-up: imports, memory open, template index
        time_bare(bare, n)
        time_plangraph(plan, n, data_dir)
    times: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.repeat):  # interleaved, so background load hits both alike
        for n in (args.short, args.long):
            times.setdefault(("bare", n), []).append(time_bare(bare, n))
            times.setdefault(("plangraph", n), []).append(time_plangraph(plan, n, data_dir))
    med = {k: statistics.median(v) for k, v in times.items()}
    span = args.long - args.short
    per_step = {g: (med[(g, args.long)] - med[(g, args.short)]) / span for g in ("bare", "plangraph")}
    ratio = per_step["plangraph"] / per_step["bare"]
    rows = [
        [
            g,
            f"{med[(g, args.short)] * 1000:.1f}",
            f"{med[(g, args.long)] * 1000:.1f}",
            f"{per_step[g] * 1000:.2f}",
        ]
        for g in ("bare", "plangraph")
    ]
    headers = ["graph", f"run, {args.short} step(s) (ms)", f"run, {args.long} steps (ms)", "per step (ms)"]
    text = table(headers, rows)
    verdict = "meets" if ratio <= 2.0 else "misses"
    print(text)
    print(f"ratio plangraph/bare per step: {ratio:.2f}x ({verdict} the 2x target)")
    write_section(
        "graph-overhead",
        f"""## Executor overhead per plan step

Command: `PYTHONPATH=. .venv/bin/python bench/graph_overhead.py --short {args.short} --long {args.long} --repeat {args.repeat}`
(medians of {args.repeat} interleaved runs after a warm-up; {machine()}).

Both graphs loop dispatcher → worker (`Send`) → dispatcher once per step, checkpointed in the same
SqliteSaver file (WAL). plangraph runs a chain template of trivial registered agents that return a
completed AgentExecResult without writing memory; per-step cost = (run at {args.long} steps − run at
{args.short}) / {span}, so remember/planner/finalizer cancel out.

{text}

**Ratio plangraph / bare LangGraph per step: {ratio:.2f}×** — {verdict} the ≤ 2× target.
""",
    )


if __name__ == "__main__":
    main()
