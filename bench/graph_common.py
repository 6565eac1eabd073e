"""Shared parts of the whole-graph benchmarks (bench/graph_*.py).

Each benchmark prints a Markdown table and rewrites its own section of docs/benchmarks.md,
between `<!-- <name>:start -->` and `<!-- <name>:end -->`; other sections are left untouched.
"""

from __future__ import annotations

import os
import platform
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

from nodes.kit.registry import AgentSpec
from nodes.kit.step import StepContext
from tests.support.offline import OFFLINE_ENV
from tools.contracts import AgentExecResult

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
HEADER = "# Benchmarks\n\nMeasured numbers only; each section names the command that reproduces it.\n"

for _name, _value in {**OFFLINE_ENV, "PLANGRAPH_EMBEDDINGS": "hash"}.items():
    os.environ.setdefault(_name, _value)


def machine() -> str:
    """One line describing where the numbers were measured."""
    return (
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}; "
        "the machine was shared with other jobs while measuring, so absolute times are noisy"
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_section(name: str, body: str) -> None:
    """Replace (or append) the `name` section of docs/benchmarks.md; read-modify-write."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.strip()}\n{end}"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else HEADER
    if start in text and end in text:
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote section {name!r} of {DOC.relative_to(ROOT)}")


def sqlite_saver(path: Path):  # noqa: ANN201 - a SqliteSaver
    """A SqliteSaver on a file, set up like plangraph.checkpoint (WAL)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def done(ctx: StepContext, output: str = "ok", **context: object) -> AgentExecResult:
    """A completed AgentExecResult without touching memory (the cheapest possible agent)."""
    return AgentExecResult(
        recordId=f"{ctx.plan_id}:{ctx.seq_no}", output=output, status="completed", context=dict(context)
    )


def agent(name: str, run, description: str = "") -> AgentSpec:  # noqa: ANN001
    """A registered-style AgentSpec for benchmarks."""
    return AgentSpec(name, description or f"benchmark agent {name}", run, examples=(name,))


def chain_template(name: str, agent_name: str, n: int, parallel: bool = False) -> SimpleNamespace:
    """A workflow template of `n` steps of `agent_name`, a chain (or all independent)."""
    return SimpleNamespace(
        name=name,
        description=name,
        examples=(name,),
        steps=[
            {
                "seqNo": i,
                "agentName": agent_name,
                "requirement": f"step {i}",
                "dependsOn": [] if parallel or i == 0 else [i - 1],
            }
            for i in range(n)
        ],
    )


class Timer:
    """`with Timer() as t: ...; t.seconds`."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
