"""A fixed handful of the labelled requests (cases.jsonl) through `plangraph run --json`, in process.

The full set is measured by `bench/understanding_eval.py` (docs/understanding.md); these cases
pin the parser-level behaviour: English requests and units read, English replies, follow-up
changes carried, reverse-optimisation variables and targets read from words, impossible
values named back with nothing recorded. Plans are not asserted here (planning is its own work).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("understanding_eval", ROOT / "bench" / "understanding_eval.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["understanding_eval"] = bench
_spec.loader.exec_module(bench)

CASES = {c["id"]: c for c in bench.load_cases("all")}
# Each checked on parameters, question due and reply language (not on the plan's shape).
PINNED = [
    "calc-en-05",  # "3MW C&I solar system in Hangzhou Xiaoshan": English place, type, MW
    "calc-zh-15",  # "酒店屋顶…运营25年": a building word for the type, a lifetime without "运营期"
    "missing-en-02",  # an English answer ("800 kW") to an English question
    "change-en-05",  # "Make it residential, 20 kW.": a change with no trigger phrase carries the rest
    "reverse-zh-02",  # capacity solved from the yearly load, without asking for a capacity
    "reverse-zh-03",  # self-consumption as the variable
    "reverse-zh-09",  # an IRR of 80%: infeasible, reported with the best reachable value
    "reverse-en-20",  # capacity without a yearly load: asked in English, the English answer read
    "bad-zh-01",  # "电价-1元/度": named back, nothing recorded
    "mixed-02",  # "Hangzhou 余杭区的工商业项目…": mixed languages, Chinese reply
    "oos-en-01",  # English small talk: an English "I don't know"
]


def test_the_labelled_set_is_large_and_split():
    kinds = {c["kind"] for c in CASES.values()}
    assert len(CASES) >= 150 and {"reverse", "followup_change", "out_of_scope", "bad_input"} <= kinds
    splits = [c["split"] for c in CASES.values()]
    assert 0.4 < splits.count("test") / len(splits) < 0.6
    assert {c["lang"] for c in CASES.values()} == {"zh", "en"}


@pytest.mark.slow
@pytest.mark.parametrize("case_id", PINNED)
def test_pinned_case(case_id, data_dir, tmp_path):
    case = CASES[case_id]
    observed = bench.run_case(case, tmp_path / "runs")
    score = bench.score_case(case, observed)
    why = [w for t in score["turns"] for w in t["why"]]
    assert (score["params"], score["question"], score["language"]) == (True, True, True), why


def test_language_is_read_from_the_words():
    assert bench.detect_language("Commercial 1 MW in 苏州, please calculate the IRR.") == "en"
    assert bench.detect_language("帮我算一下 Suzhou 的 commercial 光伏，1MW，看看 IRR") == "zh"
