"""Understanding benchmark: labelled requests (tests/understanding/cases.jsonl) run through `plangraph run --json`.

Each case gets a fresh data dir and conversation; its turns are sent one after the other with
`plangraph run REQUEST --json --conversation C [--answer A]…`, and the JSON events (`chunk`,
`interrupt`, `final`) are scored per turn on four counts:

- plan      the steps (agent names in order + `dependsOn`) equal one of the expected plans; `[]`
            means "no sub-agent step": no new plan, or only knowledge steps that found nothing;
- params    the expected values are in the completed step's `result.context.inputs` (or
            `base.inputs`), the reverse step's `variable` / `target` / `feasible`, the knowledge
            step's `found`; a recalled figure of the previous result is quoted; bad values are
            named back (`mentions`) and nothing is recorded as a result (`no_result`);
- question  a question was asked before the turn finished iff one is due;
- language  every question and the final summary are in the expected language (CJK share).

A case counts as right on a count when all its turns are. Usage (from the repository root):

    PYTHONPATH=. .venv/bin/python bench/understanding_eval.py --split test
    PYTHONPATH=. .venv/bin/python bench/understanding_eval.py --split dev --kind reverse -v
    PYTHONPATH=. .venv/bin/python bench/understanding_eval.py --split every --out runs.jsonl
    PYTHONPATH=. .venv/bin/python bench/understanding_eval.py --report runs.jsonl --split heldout

`--split heldout` runs tests/understanding/heldout.jsonl (session 8) and `--split heldout2`
tests/understanding/heldout2.jsonl (session 9), `--split heldout3` tests/understanding/heldout3.jsonl
(session 10), `--split heldout4` tests/understanding/heldout4.jsonl (session 11), phrasings written
before the fixes they measure: report them, never tune on them.
`every` = dev + test + all held-out sets in one run.

By default the CLI runs in this process (`plangraph.cli.main`, same code path and JSON as the
console script, without ~5 s of start-up per turn); `--subprocess` runs the real console script.
`--embeddings hash|minilm` sets PLANGRAPH_EMBEDDINGS (routing never uses embeddings; the
knowledge agent's relevance check does, so the reported numbers use the default MiniLM).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "understanding" / "cases.jsonl"
# Held-out phrasings (split "heldout"), written before the fixes they measure and never tuned on:
# run only to report (`--split heldout`), not while developing.
HELDOUT = ROOT / "tests" / "understanding" / "heldout.jsonl"
# A second held-out set (split "heldout2", session 9), written the same way before the changes it measures.
HELDOUT2 = ROOT / "tests" / "understanding" / "heldout2.jsonl"
# A third held-out set (split "heldout3", session 10), written the same way before the changes it measures.
HELDOUT3 = ROOT / "tests" / "understanding" / "heldout3.jsonl"
# A fourth held-out set (split "heldout4", session 11), written the same way before the changes it measures.
HELDOUT4 = ROOT / "tests" / "understanding" / "heldout4.jsonl"
_HELDOUT_SPLITS = ("heldout", "heldout2", "heldout3", "heldout4")
COUNTS = ("plan", "params", "question", "language")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[A-Za-z]{2,}")
# Tokens that read the same in both languages and say nothing about the reply's language.
_NEUTRAL = frozenset(
    {"kw", "mw", "kwh", "kwp", "mwh", "irr", "npv", "lcoe", "pv", "html", "md", "png", "store"}
)

__all__ = ["detect_language", "load_cases", "run_case", "score_turn"]


def load_cases(split: str = "all", kind: str | None = None, ids: Iterable[str] = ()) -> list[dict]:
    """The cases of `split` (dev, test, all = both, heldout…heldout4, every = all); one kind or some ids."""
    wanted = set(ids)
    sources = {
        "heldout": [HELDOUT],
        "heldout2": [HELDOUT2],
        "heldout3": [HELDOUT3],
        "heldout4": [HELDOUT4],
        "every": [CASES, HELDOUT, HELDOUT2, HELDOUT3, HELDOUT4],
    }.get(split, [CASES])
    lines = [line for source in sources for line in source.read_text(encoding="utf-8").splitlines()]
    cases = [json.loads(line) for line in lines if line.strip()]
    return [
        c
        for c in cases
        if (split in ("all", "every", *_HELDOUT_SPLITS) or c["split"] == split)
        and (kind is None or c["kind"] == kind)
        and (not wanted or c["id"] in wanted)
    ]


def detect_language(text: str) -> str:
    """Chinese ("zh") when Chinese characters carry the text, else "en" (paths, units do not count)."""
    text = re.sub(r"(?:/|[A-Za-z]:\\)[^\s，。）)]+", " ", text)  # file paths
    cjk = len(_CJK.findall(text))
    words = sum(1 for w in _WORD.findall(text) if w.lower() not in _NEUTRAL)
    return "zh" if cjk / 1.5 >= words and cjk > 0 else "en"


# --- running ---------------------------------------------------------------------------------


def _cli_inprocess(argv: list[str]) -> tuple[int, str]:
    from plangraph.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def _cli_subprocess(argv: list[str]) -> tuple[int, str]:
    exe = ROOT / ".venv" / "bin" / "plangraph"
    proc = subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=600, check=False)
    return proc.returncode, proc.stdout


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def run_case(case: dict, data_root: Path, subprocess_mode: bool = False) -> list[dict]:
    """Run every turn of `case` in a fresh data dir; one observation dict per turn."""
    cli = _cli_subprocess if subprocess_mode else _cli_inprocess
    data_dir = data_root / case["id"]
    os.environ["PLANGRAPH_DATA_DIR"] = str(data_dir)
    conversation = "u-" + case["id"]
    observed: list[dict] = []
    previous_plan_id = None
    for turn in case["turns"]:
        argv = ["run", turn["request"], "--json", "--conversation", conversation]
        for answer in turn.get("answers", []):
            argv += ["--answer", answer]
        started = time.perf_counter()
        code, stdout = cli(argv)
        events = _events(stdout)
        final = next((e for e in events if e["event"] == "final"), None)
        plan = final["plan"] if final else None
        if final is None and code == 3:
            code_plan, plan_json = cli(["plan", "--conversation", conversation, "--format", "json"])
            plan = json.loads(plan_json) if code_plan == 0 and plan_json.strip().startswith("{") else None
        if plan is not None and plan.get("planId") == previous_plan_id:
            plan = None  # the planner made no new plan for this turn
        if plan is not None:
            previous_plan_id = plan.get("planId")
        observed.append(
            {
                "exit": code,
                "seconds": round(time.perf_counter() - started, 2),
                "questions": [e["question"] for e in events if e["event"] == "interrupt"],
                "summary": final["summary"] if final else "",
                "plan": plan,
                "errors": [e["message"] for e in events if e["event"] == "error"],
            }
        )
    return observed


# --- scoring ---------------------------------------------------------------------------------


def _steps(plan: dict | None) -> list[dict]:
    return list(plan["steps"]) if plan else []


def _context(step: dict) -> dict:
    return (step.get("result") or {}).get("context") or {}


def _plan_right(expected: list[list], plan: dict | None) -> bool:
    shape = [[s["agentName"], sorted(s.get("dependsOn", []))] for s in _steps(plan)]
    for alternative in expected:
        if not alternative:
            quiet = all(
                s["agentName"] == "knowledge" and s["status"] == "completed" and not _context(s).get("found")
                for s in _steps(plan)
            )
            if quiet:
                return True
        elif shape == [[name, sorted(deps)] for name, deps in alternative]:
            return True
    return False


def _inputs(plan: dict | None) -> dict:
    for step in _steps(plan):
        if step["status"] != "completed":
            continue
        ctx = _context(step)
        for candidate in (ctx, ctx.get("base")):
            if isinstance(candidate, dict) and isinstance(candidate.get("inputs"), dict):
                return candidate["inputs"]
    return {}


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return isinstance(got, (int, float)) and abs(float(got) - want) <= 1e-6 * max(1.0, abs(want))
    return want == got


def _recalled(metric: str, value: float | None, reply: str) -> bool:
    if value is None:
        return False
    forms = {
        "npv": [f"{value / 1e4:,.2f}", f"{value / 1e4:.2f}", f"{value:,.0f}", f"{value / 1e4:,.1f}"],
        "investment": [f"{value / 1e4:,.2f}", f"{value / 1e4:.2f}", f"{value:,.0f}", f"{value / 1e4:,.1f}"],
        "irr": [f"{value * 100:.2f}", f"{value * 100:.1f}"],
        "payback_static": [f"{value:.2f}", f"{value:.1f}"],
        "lcoe": [f"{value:.3f}", f"{value:.2f}"],
    }[metric]
    return any(form in reply for form in forms)


def _last_results(plan: dict | None) -> dict:
    for step in reversed(_steps(plan)):
        ctx = _context(step)
        for candidate in (ctx, ctx.get("base")):
            if (
                step["status"] == "completed"
                and isinstance(candidate, dict)
                and isinstance(candidate.get("results"), dict)
            ):
                return candidate["results"]
    return {}


def _params_right(expect: dict, seen: dict, earlier: dict | None) -> tuple[bool, list[str]]:
    """Whether the turn's values are right, and what was wrong."""
    wrong: list[str] = []
    plan = seen["plan"]
    inputs = _inputs(plan)
    reverse = next((_context(s) for s in _steps(plan) if s["agentName"] == "reverse_opt"), {})
    knowledge = next((_context(s) for s in _steps(plan) if s["agentName"] == "knowledge"), {})
    for key, want in expect.get("params", {}).items():
        if key == "variable":
            got = reverse.get("variable")
        elif key == "target_kind":
            got = (reverse.get("target") or {}).get("kind")
        elif key == "target_value":
            got = (reverse.get("target") or {}).get("value")
        elif key == "feasible":
            got = reverse.get("feasible")
        elif key == "found":
            got = knowledge.get("found")
        else:
            got = inputs.get(key)
        if not _same(want, got):
            wrong.append(f"{key}: want {want!r}, got {got!r}")
    texts = " ".join(seen["questions"]) or seen["summary"]
    for alternatives in expect.get("mentions", []):
        if not any(a.lower() in texts.lower() for a in alternatives.split("|")):
            wrong.append(f"reply does not name {alternatives!r}")
    if expect.get("no_result") and any(s["status"] == "completed" for s in _steps(plan)):
        wrong.append("a result was recorded")
    if metric := expect.get("recall"):
        value = _last_results(earlier).get(metric) if earlier else None
        if not _recalled(metric, value, seen["summary"]):
            wrong.append(f"reply does not quote the earlier {metric} ({value!r})")
    return not wrong, wrong


def score_turn(expect: dict, seen: dict, earlier: dict | None) -> dict[str, Any]:
    """Right/wrong on each count for one turn, with the reasons for what was wrong."""
    params_ok, why = _params_right(expect, seen, earlier)
    asked = bool(seen["questions"])
    replies = [*seen["questions"], seen["summary"]] if seen["summary"] else list(seen["questions"])
    languages = {detect_language(t) for t in replies if t.strip()}
    return {
        "plan": _plan_right(expect["plans"], seen["plan"]),
        "params": params_ok,
        "question": asked == expect["question"],
        "language": bool(languages) and languages == {expect["lang"]},
        "why": why + ([] if languages == {expect["lang"]} else [f"language {sorted(languages)}"]),
    }


def score_case(case: dict, observed: list[dict]) -> dict[str, Any]:
    """A case is right on a count when every turn is."""
    turns = []
    earlier: dict | None = None
    for turn, seen in zip(case["turns"], observed, strict=True):
        turns.append(score_turn(turn["expect"], seen, earlier))
        if seen["plan"] is not None:
            earlier = seen["plan"]
    return {count: all(t[count] for t in turns) for count in COUNTS} | {"turns": turns}


def table(rows: list[dict]) -> str:
    """Markdown table: per kind × language, percent right on each count (and all four)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["kind"]].append(row)
        groups[f"lang:{row['lang']}"].append(row)
        groups["ALL"].append(row)
    lines = ["| kind | n | plan | params | question | language | all four |", "|---|---|---|---|---|---|---|"]
    for name in sorted(groups, key=lambda g: (g == "ALL", g.startswith("lang:"), g)):
        rs = groups[name]
        cells = [f"{100 * sum(r[c] for r in rs) / len(rs):.0f}%" for c in COUNTS]
        every = 100 * sum(all(r[c] for c in COUNTS) for r in rs) / len(rs)
        lines.append(f"| {name} | {len(rs)} | " + " | ".join(cells) + f" | {every:.0f}% |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the cases and print the per-kind table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=["dev", "test", "all", *_HELDOUT_SPLITS, "every"], default="dev")
    p.add_argument("--prefix", default="", help="with --report: only the cases whose id starts so")
    p.add_argument("--kind", default=None)
    p.add_argument("--id", action="append", default=[], help="run only these case ids (repeatable)")
    p.add_argument("--subprocess", action="store_true", help="run the console script per turn")
    p.add_argument("--embeddings", choices=["minilm", "hash"], default="minilm")
    p.add_argument("--out", default=None, help="write one JSON line per case (observations + scores)")
    p.add_argument("-v", "--verbose", action="store_true", help="print each wrong case with the reasons")
    p.add_argument("--report", default=None, help="only print the table of an earlier --out file")
    args = p.parse_args(argv)
    if args.report:
        split_of = {c["id"]: c["split"] for c in load_cases("every")}
        lines = Path(args.report).read_text(encoding="utf-8").splitlines()
        rows = [
            r
            for r in map(json.loads, lines)
            if r["id"].startswith(args.prefix)
            and (
                args.split in (split_of.get(r["id"]), "every")
                or (args.split == "all" and split_of.get(r["id"]) in ("dev", "test"))
            )
        ]
        print(f"split={args.split} cases={len(rows)} (from {args.report})")
        print(table(rows) if rows else "no cases")
        return 0
    os.environ["PLANGRAPH_EMBEDDINGS"] = args.embeddings
    os.environ.pop("PLANGRAPH_MODEL", None)
    from tests.support.offline import OFFLINE_ENV

    os.environ.update(OFFLINE_ENV)
    cases = load_cases(args.split, args.kind, args.id)
    rows, started = [], time.perf_counter()
    out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    with tempfile.TemporaryDirectory(prefix="plangraph-understanding-") as tmp:
        for case in cases:
            observed = run_case(case, Path(tmp), args.subprocess)
            score = score_case(case, observed)
            row = {"id": case["id"], "kind": case["kind"], "lang": case["lang"], **score}
            rows.append(row)
            if out:
                out.write(json.dumps({**row, "observed": observed}, ensure_ascii=False, default=str) + "\n")
            if args.verbose and not all(score[c] for c in COUNTS):
                wrong = [c for c in COUNTS if not score[c]]
                why = "; ".join(w for t in score["turns"] for w in t["why"])
                print(f"✗ {case['id']} [{', '.join(wrong)}] {why}", file=sys.stderr)
    if out:
        out.close()
    elapsed = time.perf_counter() - started
    print(f"split={args.split} cases={len(rows)} embeddings={args.embeddings} seconds={elapsed:.0f}")
    print(f"load average: {Path('/proc/loadavg').read_text().strip()}")
    print(table(rows) if rows else "no cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
