"""Wall time of 8 independent sleeping steps through the whole graph, sync and async.

    PYTHONPATH=. .venv/bin/python bench/graph_parallel.py [--steps 8 --repeat 3]

One template plan of `--steps` independent steps; step i sleeps 0.20 + 0.05·i s (no model).
Target: wall time ≈ the longest step (plus the graph's fixed cost, measured with 0-second sleeps),
for `invoke`, `stream`, `ainvoke` and `astream`, each on a fresh thread of a SqliteSaver file.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.graph_common import agent, chain_template, done, machine, sqlite_saver, table, write_section

SLEEP = {"on": True}


def _sleep_step(ctx):  # noqa: ANN001, ANN202
    if SLEEP["on"]:
        time.sleep(0.20 + 0.05 * ctx.seq_no)
    return done(ctx)


MAX_CONCURRENCY = {"value": None}


def _args(n: int, data: Path) -> tuple[dict, dict, Any]:
    from graphs.context import Context

    thread = uuid.uuid4().hex
    request = {"messages": [{"role": "user", "content": f"benchmark {n} parallel steps"}]}
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if MAX_CONCURRENCY["value"]:
        config["max_concurrency"] = MAX_CONCURRENCY["value"]
    return request, config, Context(user_id="bench", data_dir=str(data))


def run_sync(graph: Any, mode: str, n: int, data: Path) -> float:
    request, config, context = _args(n, data)
    start = time.perf_counter()
    if mode == "invoke":
        graph.invoke(request, config, context=context)
    else:
        for _ in graph.stream(request, config, context=context, stream_mode=["custom", "updates"]):
            pass
    seconds = time.perf_counter() - start
    steps = graph.get_state(config).values["plan"]["steps"]
    assert len(steps) == n and all(s["status"] == "completed" for s in steps)
    return seconds


async def run_async(graph: Any, mode: str, n: int, data: Path) -> float:
    request, config, context = _args(n, data)
    start = time.perf_counter()
    if mode == "ainvoke":
        await graph.ainvoke(request, config, context=context)
    else:
        async for _ in graph.astream(request, config, context=context, stream_mode=["custom", "updates"]):
            pass
    seconds = time.perf_counter() - start
    steps = (await graph.aget_state(config)).values["plan"]["steps"]
    assert len(steps) == n and all(s["status"] == "completed" for s in steps)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from graphs.main import build_graph

    work = Path(tempfile.mkdtemp(prefix="plangraph-bench-parallel-"))
    data = work / "data"
    specs = {"sleeper": agent("sleeper", _sleep_step)}
    templates = [
        chain_template(f"benchmark {args.steps} parallel steps", "sleeper", args.steps, parallel=True)
    ]
    sync_graph = build_graph(
        checkpointer=sqlite_saver(work / "sync.sqlite"), specs=specs, templates=templates
    )
    longest = 0.20 + 0.05 * (args.steps - 1)
    total = sum(0.20 + 0.05 * i for i in range(args.steps))

    async def measure_async(mode: str, sleep: bool) -> list[float]:
        SLEEP["on"] = sleep
        async with AsyncSqliteSaver.from_conn_string(str(work / "async.sqlite")) as saver:
            graph = build_graph(checkpointer=saver, specs=specs, templates=templates)
            await run_async(graph, mode, args.steps, data)  # warm-up
            return [await run_async(graph, mode, args.steps, data) for _ in range(args.repeat)]

    rows = []
    for mode, limit in [(m, None) for m in ("invoke", "stream", "ainvoke", "astream")] + [
        ("invoke", 16),
        ("ainvoke", 16),
    ]:
        MAX_CONCURRENCY["value"] = limit
        if mode in ("invoke", "stream"):
            SLEEP["on"] = False
            run_sync(sync_graph, mode, args.steps, data)  # warm-up
            fixed = statistics.median(
                run_sync(sync_graph, mode, args.steps, data) for _ in range(args.repeat)
            )
            SLEEP["on"] = True
            wall = statistics.median(run_sync(sync_graph, mode, args.steps, data) for _ in range(args.repeat))
        else:
            fixed = statistics.median(asyncio.run(measure_async(mode, False)))
            wall = statistics.median(asyncio.run(measure_async(mode, True)))
        label = mode if limit is None else f"{mode}, config max_concurrency={limit}"
        rows.append(
            [label, f"{wall:.2f}", f"{fixed:.2f}", f"{wall - fixed:.2f}", f"{(wall - fixed) / longest:.2f}"]
        )
        print(rows[-1], flush=True)
    headers = ["mode", "wall (s)", "same plan, 0 s sleeps (s)", "wall − fixed (s)", "÷ longest step"]
    text = table(headers, rows)
    print(text)
    write_section(
        "graph-parallel",
        f"""## {args.steps} independent sleeping steps: sync and async

Command: `PYTHONPATH=. .venv/bin/python bench/graph_parallel.py --steps {args.steps} --repeat {args.repeat}`
(medians; {machine()}).

One plan of {args.steps} independent steps; step i sleeps 0.20 + 0.05·i s, so the longest is
{longest:.2f} s and the sum {total:.2f} s. "Fixed" is the same plan with 0-second sleeps (planner,
executor, checkpoints, finalizer); wall − fixed ≈ the longest step means the steps overlapped. Without `max_concurrency` in the
run config, LangGraph's sync API runs nodes on a thread pool of min(32, cores + 4) workers — 6 on
this 2-core machine — so 8 steps cannot all start at once; `PlanRunner` (CLI, HTTP server) passes
`max_concurrency=16`, as do the last rows. Under the async API sync nodes would run on the event
loop's default executor (also 6 workers, not resized by `max_concurrency`), so agent nodes are
wrapped by `nodes.kit.agent_node.threaded`: their async path runs on a 32-thread step pool of their
own (before that wrapper, ainvoke took 1.39× the longest step even with `max_concurrency=16`).

{text}
""",
    )


if __name__ == "__main__":
    main()
