"""The held-out understanding sets load and are well formed (no case is run: they are only reported).

A malformed row (a typo in a key, an agent that does not exist, a dependency on a later step, a
place the PV data does not know) would silently score as wrong in `bench/understanding_eval.py`;
this test makes it fail `make test` instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.understanding_eval import _HELDOUT_SPLITS, load_cases
from nodes.agents import agents
from tools.pv.data import locations

HERE = Path(__file__).resolve().parent
FILES = {"heldout": "heldout.jsonl", "heldout2": "heldout2.jsonl", "heldout3": "heldout3.jsonl"}
FILES["heldout4"] = "heldout4.jsonl"
KINDS = {
    "calc",
    "combo",
    "reverse",
    "knowledge",
    "out_of_scope",
    "mixed_language",
    "followup_change",
    "followup_recall",
    "followup_reuse",
    "bad_input",
    "missing_info",
}
INPUTS = {
    "location",
    "project_type",
    "capacity_kw",
    "capex_yuan_per_w",
    "electricity_price",
    "self_consumption",
    "feed_in_price",
    "discount_rate",
    "lifetime_years",
    "annual_load_kwh",
}
VARIABLES = {"capacity_kw", "capex_yuan_per_w", "electricity_price", "self_consumption", "feed_in_price"}
RECALL = {"npv", "irr", "payback_static", "lcoe", "investment"}
EXPECT_KEYS = {"plans", "params", "question", "lang", "mentions", "no_result", "recall"}


def _places() -> set[str]:
    return {row.city + (row.district or "") for row in locations()}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _plausible(key: str, value: Any) -> bool:
    """An expected input is a number; a share is 0–1, a size or count above 0, a price not negative."""
    if not _number(value):
        return False
    if key in ("self_consumption", "discount_rate"):
        return 0 <= value <= 1
    return (
        value > 0
        if key in ("capacity_kw", "lifetime_years", "annual_load_kwh", "capex_yuan_per_w")
        else value >= 0
    )


def problems(case: dict[str, Any], split: str) -> list[str]:
    """What is wrong with one case of `split` (empty when it is well formed)."""
    wrong: list[str] = []
    if set(case) != {"id", "kind", "lang", "turns", "split"}:
        return [f"keys {sorted(case)}"]
    if case["split"] != split or case["kind"] not in KINDS or case["lang"] not in ("zh", "en"):
        wrong.append(f"split/kind/lang {case['split']!r} {case['kind']!r} {case['lang']!r}")
    if not isinstance(case["turns"], list) or not case["turns"]:
        return [*wrong, "no turns"]
    names, places = set(agents()), _places()
    for turn in case["turns"]:
        if not set(turn) <= {"request", "answers", "expect"} or not str(turn.get("request", "")).strip():
            wrong.append(f"turn keys {sorted(turn)}")
            continue
        if not all(isinstance(a, str) and a.strip() for a in turn.get("answers", [])):
            wrong.append("answers must be non-empty strings")
        expect = turn["expect"]
        if not set(expect) <= EXPECT_KEYS or not {"plans", "params", "question", "lang"} <= set(expect):
            wrong.append(f"expect keys {sorted(expect)}")
            continue
        if not isinstance(expect["question"], bool) or expect["lang"] not in ("zh", "en"):
            wrong.append("question must be a bool, lang zh or en")
        if turn.get("answers") and not expect["question"]:
            wrong.append("answers given but no question due")
        if not isinstance(expect["plans"], list) or not expect["plans"]:
            wrong.append("plans must list at least one alternative")
        for plan in expect["plans"] if isinstance(expect["plans"], list) else []:
            for i, step in enumerate(plan):
                name, deps = step
                if name not in names or not all(isinstance(d, int) and 0 <= d < i for d in deps):
                    wrong.append(f"step {i} {step!r}")
        for key, value in expect["params"].items():
            if key in INPUTS - {"location", "project_type"} and not _plausible(key, value):
                wrong.append(f"{key}={value!r}")
            elif key == "location" and value not in places:
                wrong.append(f"location {value!r} is not in the PV data")
            elif key == "project_type" and value not in ("工商业", "户用"):
                wrong.append(f"project_type {value!r}")
            elif key == "variable" and value not in VARIABLES:
                wrong.append(f"variable {value!r}")
            elif key == "target_kind" and value not in ("irr", "npv", "payback"):
                wrong.append(f"target_kind {value!r}")
            elif key == "target_value" and not _number(value):
                wrong.append(f"target_value {value!r}")
            elif key in ("feasible", "found") and not isinstance(value, bool):
                wrong.append(f"{key}={value!r}")
            elif key not in INPUTS | {"variable", "target_kind", "target_value", "feasible", "found"}:
                wrong.append(f"unknown param {key!r}")
        if "recall" in expect and expect["recall"] not in RECALL:
            wrong.append(f"recall {expect['recall']!r}")
        mentions = expect.get("mentions", [])
        if not isinstance(mentions, list) or not all(isinstance(m, str) and m.strip("|") for m in mentions):
            wrong.append(f"mentions {mentions!r}")
        if "no_result" in expect and expect["no_result"] is not True:
            wrong.append("no_result is only ever true")
    return wrong


@pytest.mark.parametrize("split", _HELDOUT_SPLITS)
def test_heldout_sets_are_well_formed(split: str) -> None:
    path = HERE / FILES[split]
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    assert len({r["id"] for r in rows}) == len(rows), "ids must be unique"
    bad = {r["id"]: p for r in rows if (p := problems(r, split))}
    assert not bad, bad
    assert [c["id"] for c in load_cases(split)] == [r["id"] for r in rows]


def test_heldout4_covers_the_issue_kinds_in_both_languages() -> None:
    rows = load_cases("heldout4")
    assert len(rows) >= 90 and all(r["id"].startswith("h4-") for r in rows)
    assert {(r["kind"], r["lang"]) for r in rows} == {(k, lang) for k in KINDS for lang in ("zh", "en")}
    assert abs(sum(r["lang"] == "zh" for r in rows) - len(rows) / 2) <= len(rows) * 0.1
    reverse = [t["expect"]["params"] for r in rows for t in r["turns"] if "variable" in t["expect"]["params"]]
    assert {p["variable"] for p in reverse} == VARIABLES
    assert {p["target_kind"] for p in reverse} == {"irr", "npv", "payback"}
    assert any(p.get("feasible") is False for p in reverse)
    assert {c["id"] for c in load_cases("heldout4")} <= {c["id"] for c in load_cases("every")}


def test_a_malformed_case_is_caught() -> None:
    good = load_cases("heldout4")[0]
    assert problems(good, "heldout4") == []
    turn = good["turns"][0]
    broken = [
        {**good, "kind": "chitchat"},
        {**good, "turns": [{**turn, "expect": {**turn["expect"], "plans": [[["pv_calc", [1]]]]}}]},
        {**good, "turns": [{**turn, "expect": {**turn["expect"], "params": {"location": "洛阳市"}}}]},
        {**good, "turns": [{**turn, "expect": {**turn["expect"], "params": {"capacty_kw": 5}}}]},
        {**good, "turns": [{**turn, "expect": {**turn["expect"], "plans": [[["pv_calculator", []]]]}}]},
    ]
    assert all(problems(case, "heldout4") for case in broken)
