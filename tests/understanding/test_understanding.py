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


def assert_right(case: dict, observed: list[dict], counts: tuple[str, ...] = ()) -> None:
    """`case` scored on `observed`: the `counts` (all of bench.COUNTS by default) right, else the reasons."""
    score = bench.score_case(case, observed)
    why = [w for t in score["turns"] for w in t["why"]]
    assert all(score[c] for c in counts or bench.COUNTS), why


def _turn(request: str, plans: list, params: dict, lang: str = "zh") -> dict:
    expect = {"plans": plans, "params": params, "question": False, "lang": lang}
    return {"request": request, "expect": expect}


def _calc(location: str, ptype: str, kw: float, **more) -> dict:
    return {"location": location, "project_type": ptype, "capacity_kw": kw, **more}


CALC = [[["pv_calc", []]]]
# Follow-ups on the conversation's case written for these tests (not in cases.jsonl or heldout.jsonl):
# a supposed value, a change by an amount, a reverse optimisation's target changed.
FOLLOW_UPS = {
    "suppose-zh": [
        _turn("绍兴工商业40kW，算一下", CALC, _calc("绍兴市", "工商业", 40)),
        _turn("那要是户用的话呢", CALC, _calc("绍兴市", "户用", 40)),
    ],
    "suppose-en": [
        _turn("Calculate 30 kW commercial PV in Jinan.", CALC, _calc("济南市", "工商业", 30), "en"),
        _turn("What if it were residential?", CALC, _calc("济南市", "户用", 30), "en"),
    ],
    "relative-zh": [
        _turn(
            "常州工商业1MW，造价3.4元/W，测算", CALC, _calc("常州市", "工商业", 1000, capex_yuan_per_w=3.4)
        ),
        _turn("单瓦造价再便宜0.5元呢", CALC, _calc("常州市", "工商业", 1000, capex_yuan_per_w=2.9)),
    ],
    "relative-en": [
        _turn(
            "Commercial 2 MW in Nantong, tariff 0.8 yuan/kWh.", CALC, _calc("南通市", "工商业", 2000), "en"
        ),
        _turn(
            "And if the tariff fell by 0.1?",
            CALC,
            _calc("南通市", "工商业", 2000, electricity_price=0.7),
            "en",
        ),
    ],
    "reverse-carry": [
        _turn(
            "Commercial 1 MW in Hefei: the lowest electricity price for an 8% IRR?",
            [[["pv_calc", []], ["reverse_opt", [0]]], [["reverse_opt", []]]],
            {"variable": "electricity_price", "target_kind": "irr", "target_value": 0.08},
            "en",
        ),
        _turn(
            "And for a 10% IRR?",
            [[["reverse_opt", []]]],
            {"variable": "electricity_price", "target_kind": "irr", "target_value": 0.1},
            "en",
        ),
    ],
    # session 9: a figure of a pointed-at case, a wh-question stating a value, any short wording before
    # a value, a discount
    "recall-pointer-zh": [
        _turn("南通工商业600kW，测算", CALC, _calc("南通市", "工商业", 600)),
        {
            "request": "上面那个方案回本要几年",
            "expect": {
                "plans": [[]],
                "params": {},
                "question": False,
                "lang": "zh",
                "recall": "payback_static",
            },
        },
    ],
    "wh-values-en": [
        _turn("Calculate 900 kW commercial PV in Wuhan.", CALC, _calc("武汉市", "工商业", 900), "en"),
        _turn(
            "What would it look like with an 8% discount rate?",
            CALC,
            _calc("武汉市", "工商业", 900, discount_rate=0.08),
            "en",
        ),
    ],
    "free-wording-zh": [
        _turn("郑州工商业1MW测算", CALC, _calc("郑州市", "工商业", 1000)),
        _turn("折现率用7%再跑一下", CALC, _calc("郑州市", "工商业", 1000, discount_rate=0.07)),
        _turn("电价打个九折呢", CALC, _calc("郑州市", "工商业", 1000, electricity_price=0.585)),
    ],
    # a follow-up with no words of its own is answered in the conversation's language
    "bare-en": [
        _turn("Calculate 700 kW commercial PV in Qingdao.", CALC, _calc("青岛市", "工商业", 700), "en"),
        _turn("1.2 MW?", CALC, _calc("青岛市", "工商业", 1200), "en"),
    ],
    # session 10: a bare new target after a reverse optimisation, all of the power used by the owner,
    # what the whole thing costs, a yearly load given as a verb in the answer, both types named,
    # an impossible standing value
    "reverse-bare-en": [
        _turn(
            "Wuhan commercial 800 kW: what is the highest capex per watt for an 11% IRR?",
            [[["pv_calc", []], ["reverse_opt", [0]]], [["reverse_opt", []]]],
            {"variable": "capex_yuan_per_w", "target_kind": "irr", "target_value": 0.11},
            "en",
        ),
        _turn(
            "what about 14%?",
            [[["reverse_opt", []]]],
            {"variable": "capex_yuan_per_w", "target_kind": "irr", "target_value": 0.14},
            "en",
        ),
    ],
    "self-all-zh": [
        _turn("余杭区户用10千瓦测算一下", CALC, _calc("杭州市余杭区", "户用", 10)),
        _turn("要是发的电都自家用掉呢", CALC, _calc("杭州市余杭区", "户用", 10, self_consumption=1.0)),
    ],
    "recall-cost-en": [
        _turn("Household, 6 kW, Kunming - what's the IRR?", CALC, _calc("昆明市", "户用", 6), "en"),
        {
            "request": "And what would all of that cost me?",
            "expect": {"plans": [[]], "params": {}, "question": False, "lang": "en", "recall": "investment"},
        },
    ],
    "load-answer-zh": [
        {
            "request": "帮我倒推一下郑州工商业项目最合适的装机规模，希望7年回本",
            "answers": ["厂里每年大概用电两百五十万度"],
            "expect": {
                "plans": [[["reverse_opt", []]], [["pv_calc", []], ["reverse_opt", [0]]]],
                "params": {
                    "location": "郑州市",
                    "annual_load_kwh": 2_500_000,
                    "variable": "capacity_kw",
                    "target_kind": "payback",
                    "target_value": 7,
                },
                "question": True,
                "lang": "zh",
                "mentions": ["用电量"],
            },
        }
    ],
    "both-types-zh": [
        {
            "request": "宁波800kW的屋顶，户用兼工商业，帮我测一下",
            "expect": {
                "plans": CALC,
                "params": {},
                "question": True,
                "lang": "zh",
                "mentions": ["户用", "工商业"],
                "no_result": True,
            },
        }
    ],
    "standing-impossible-zh": [
        {
            "request": "今后电价一律按-0.5元/度",
            "expect": {"plans": [[]], "params": {}, "question": False, "lang": "zh", "mentions": ["不合理"]},
        },
        # nothing was kept: a later calculation asks nothing about the tariff
        _turn("宁波工商业600kW测算", CALC, _calc("宁波市", "工商业", 600)),
    ],
    # beside other work the impossible value is the calculation's question, and still not kept
    "standing-impossible-with-work-zh": [
        {
            "request": "我们的电价是-1元/度，帮我算宁波600kW工商业",
            "expect": {
                "plans": CALC,
                "params": {},
                "question": True,
                "lang": "zh",
                "mentions": ["不合理"],
                "no_result": True,
            },
        },
        _turn("宁波工商业600kW测算", CALC, _calc("宁波市", "工商业", 600)),
    ],
}
FOLLOW_UP_CASES = {
    name: {"id": name, "kind": "followup_change", "lang": turns[-1]["expect"]["lang"], "turns": turns}
    for name, turns in FOLLOW_UPS.items()
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FOLLOW_UPS))
def test_follow_up_on_the_case(name, data_dir, tmp_path):
    case = FOLLOW_UP_CASES[name]
    assert_right(case, bench.run_case(case, tmp_path / "runs"))


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
    assert_right(case, bench.run_case(case, tmp_path / "runs"), ("params", "question", "language"))


def test_language_is_read_from_the_words():
    assert bench.detect_language("Commercial 1 MW in 苏州, please calculate the IRR.") == "en"
    assert bench.detect_language("帮我算一下 Suzhou 的 commercial 光伏，1MW，看看 IRR") == "zh"
