"""Generated documentation: the LangGraph graph as Mermaid and scenario S1's plan as a picture.

    python -m plangraph.docs_gen           # (make docs) rewrite docs/img/plan-s1.* and the README block
    python -m plangraph.docs_gen --check   # exit 1 when they are stale; writes nothing

The plan comes from a real offline run of S1 in a temporary data dir (stopped at its question),
with its random ids replaced by fixed ones, so the output only changes when the code does. The
README block between the `generated:graphs` markers is replaced; the rest of README.md is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "BLOCK_END",
    "BLOCK_START",
    "PLAN_DOT",
    "PLAN_SVG",
    "S1_REQUEST",
    "StaleDocsError",
    "main",
    "mermaid",
    "readme_block",
    "replace_block",
    "s1_plan",
    "s1_plan_dot",
]

ROOT = Path(__file__).resolve().parent.parent
BLOCK_START = "<!-- generated:graphs:start -->"
BLOCK_END = "<!-- generated:graphs:end -->"
PLAN_DOT = "docs/img/plan-s1.dot"
PLAN_SVG = "docs/img/plan-s1.svg"
S1_REQUEST = "帮我生成一份光伏经济测算报告"
FIXED_PLAN_ID = "plan_s1"
# Settings that would make the run use a model, a server or user files instead of the shipped offline parts.
_UNSET = (
    "PLANGRAPH_MODEL",
    "PLANGRAPH_CHECKPOINT_URL",
    "PLANGRAPH_CHROMA_URL",
    "PLANGRAPH_TEMPLATES_DIR",
    "PLANGRAPH_KB_DIR",
    "PLANGRAPH_USER_ID",
)


class StaleDocsError(ValueError):
    """README.md has no (or a broken) generated block; the message says how to fix it."""


@contextmanager
def _offline_env() -> Iterator[None]:
    """Shipped parts only, fast deterministic embeddings; the environment is restored afterwards."""
    saved = {name: os.environ.get(name) for name in (*_UNSET, "PLANGRAPH_EMBEDDINGS")}
    for name in _UNSET:
        os.environ.pop(name, None)
    os.environ["PLANGRAPH_EMBEDDINGS"] = "hash"  # S1 routes on its (all-Chinese) words, not vectors
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def s1_plan(work_dir: Path) -> dict[str, Any]:
    """S1's plan as it waits for the user, from an offline run in `work_dir`, with fixed ids."""
    from plangraph.runner import PlanRunner

    with (
        _offline_env(),
        PlanRunner.open(
            user_id="docs", conversation_id="s1", data_dir=str(work_dir), checkpoint_url=""
        ) as runner,
    ):
        outcome = runner.run(S1_REQUEST)
    if outcome.interrupt is None or outcome.plan is None:
        raise RuntimeError("scenario S1 no longer stops at a question; update plangraph/docs_gen.py")
    # the random plan id also appears inside results (record ids, the internal plan's epId)
    text = json.dumps(outcome.plan, ensure_ascii=False).replace(outcome.plan["planId"], FIXED_PLAN_ID)
    # results stored by reference have random ids too: number them in order of appearance
    refs: dict[str, str] = {}
    text = re.sub(
        r"store://[0-9a-f]{32}", lambda m: refs.setdefault(m.group(), f"store://{len(refs) + 1:032x}"), text
    )
    plan = json.loads(text)
    for step in plan["steps"]:
        if step["result"] is not None:
            step["result"]["recordId"] = f"{FIXED_PLAN_ID}:{step['seqNo']}"
    return plan


def s1_plan_dot(work_dir: Path) -> str:
    """S1's waiting plan as DOT (the seed format, what `plangraph plan --format dot` prints)."""
    from tools.plans.dot import plan_to_dot

    dot = plan_to_dot(s1_plan(work_dir))  # type: ignore[arg-type]
    return dot if dot.endswith("\n") else dot + "\n"


def mermaid() -> str:
    """The exported LangGraph graph as Mermaid (`graphs.main.graph.get_graph().draw_mermaid()`)."""
    from graphs.main import graph

    return graph.get_graph().draw_mermaid().rstrip("\n") + "\n"


def readme_block(mermaid_text: str) -> str:
    """The README block, markers included."""
    return (
        f"{BLOCK_START}\n"
        "<!-- Written by `make docs` (python -m plangraph.docs_gen); edit plangraph/docs_gen.py instead. -->\n"
        "The compiled LangGraph graph (`graphs.main.graph.get_graph().draw_mermaid()`); dotted edges are\n"
        "routes a node picks at run time (`Command(goto=…)`, `Send`):\n\n"
        f"```mermaid\n{mermaid_text}```\n\n"
        f"Scenario S1's plan (“{S1_REQUEST}”) while step 0 waits for the user's answer, drawn like\n"
        f"`plangraph plan --format svg`; the same plan as DOT: [{PLAN_DOT}]({PLAN_DOT}).\n\n"
        f"![S1 plan: pv_calc waits for input; sensitivity and report follow]({PLAN_SVG})\n"
        f"{BLOCK_END}"
    )


def replace_block(readme: str, block: str) -> str:
    """`readme` with the text between (and including) the markers replaced by `block`."""
    starts, ends = readme.count(BLOCK_START), readme.count(BLOCK_END)
    if starts != 1 or ends != 1 or readme.index(BLOCK_START) > readme.index(BLOCK_END):
        raise StaleDocsError(
            f"README.md needs exactly one {BLOCK_START} followed by one {BLOCK_END} "
            f"(found {starts} and {ends}); put them back under '## How it works' and run make docs."
        )
    head, rest = readme.split(BLOCK_START, 1)
    return head + block + rest.split(BLOCK_END, 1)[1]


def _outputs(root: Path, work_dir: Path) -> dict[Path, bytes | None]:
    """Every generated file and its content (None: the SVG, only checked for existence)."""
    readme = (root / "README.md").read_text(encoding="utf-8")
    return {
        root / "README.md": replace_block(readme, readme_block(mermaid())).encode("utf-8"),
        root / PLAN_DOT: s1_plan_dot(work_dir).encode("utf-8"),
        root / PLAN_SVG: None,
    }


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, verify) the generated docs; 0 when they are current."""
    parser = argparse.ArgumentParser(
        prog="python -m plangraph.docs_gen",
        description="Regenerate the README graph block and docs/img/plan-s1.*",
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    parser.add_argument("--check", action="store_true", help="only report stale files; exit 1 if any")
    args = parser.parse_args(argv)
    from tools.plans.render import GraphvizMissingError, render

    try:
        with tempfile.TemporaryDirectory(prefix="plangraph-docs-", ignore_cleanup_errors=True) as work:
            outputs = _outputs(args.root, Path(work))
    except StaleDocsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stale = [
        p for p, data in outputs.items() if not p.is_file() or (data is not None and p.read_bytes() != data)
    ]
    if args.check:
        for path in stale:
            print(f"stale: {path.relative_to(args.root)} (run make docs)", file=sys.stderr)
        return 1 if stale else 0
    dot_path = args.root / PLAN_DOT
    try:
        svg = render(outputs[dot_path].decode("utf-8"), "svg")  # type: ignore[union-attr]
    except GraphvizMissingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    outputs[args.root / PLAN_SVG] = svg
    for path, data in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if data is not None and (not path.is_file() or path.read_bytes() != data):
            path.write_bytes(data)
            print(f"wrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
