"""Reverse optimisation's words: the target (IRR, NPV, payback) and the variable to solve for."""

import pytest

from nodes.agents.reverse_opt import asks_to_solve
from tools.pv.reverse import goal_target, named_variable, parse_goal, parse_target


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How large a plant should we build for a 9% IRR?", {"target_irr": 0.09, "solve_for": "capacity_kw"}),
        ("the optimal capacity for a 9% IRR", {"target_irr": 0.09, "solve_for": "capacity_kw"}),
        ("最佳装机规模是多少，回收期6年以内", {"target_payback": 6.0, "solve_for": "capacity_kw"}),
        ("装机做多大合适，IRR要8%", {"target_irr": 0.08, "solve_for": "capacity_kw"}),
        (
            "And the self-consumption share for a 12% IRR?",
            {"target_irr": 0.12, "solve_for": "self_consumption"},
        ),
        ("装多少千瓦能7年回本", {"target_payback": 7.0, "solve_for": "capacity_kw"}),
        # breaking even, without a number of years, at a bound of a variable: an NPV of at least zero
        ("造价最高多少才能保本", {"target_npv": 0.0, "solve_for": "capex_yuan_per_w"}),
        (
            "the highest capex at which it still breaks even",
            {"target_npv": 0.0, "solve_for": "capex_yuan_per_w"},
        ),
        ("自用比例最少多少，7年能回本", {"target_payback": 7.0, "solve_for": "self_consumption"}),
        # self-consumption named by its verb
        (
            "how much would we need to self-consume to get a 9% IRR?",
            {"target_irr": 0.09, "solve_for": "self_consumption"},
        ),
        (
            "what share of the power must we use ourselves for a 6-year payback?",
            {"target_payback": 6.0, "solve_for": "self_consumption"},
        ),
        ("多大的装机规模能让IRR到10%", {"target_irr": 0.1, "solve_for": "capacity_kw"}),
        ("Lowest tariff that keeps the NPV positive?", {"target_npv": 0.0, "solve_for": "electricity_price"}),
        ("单瓦造价最高多少，净现值才能转正", {"target_npv": 0.0, "solve_for": "capex_yuan_per_w"}),
        (
            "the highest price per watt for an IRR of 11 percent",
            {"target_irr": 0.11, "solve_for": "capex_yuan_per_w"},
        ),
        ("IRR达到百分之九，电价最低多少", {"target_irr": 0.09, "solve_for": "electricity_price"}),
        ("净现值要有两个亿，单瓦造价最高多少", {"target_npv": 2e8, "solve_for": "capex_yuan_per_w"}),
    ],
)
def test_targets_and_variables_in_everyday_words(text, expected):
    assert parse_target(text) == pytest.approx(expected)
    assert asks_to_solve(text)


def test_a_stated_capacity_is_not_a_question_about_it():
    assert "solve_for" not in parse_target("苏州工商业，装机1MW，测算")
    assert not asks_to_solve("屋顶能装多少千瓦怎么估")  # a question, but no target and no bound


def test_a_size_in_kwp_after_npv_is_the_project_not_a_target():
    assert parse_target("IRR and NPV of a 15 kWp home system") == {}
    assert parse_target("NPV for a 2 MWp plant, 7% discount rate") == {}


def test_a_variable_with_its_value_is_not_the_one_to_solve_for():
    assert parse_target("造价3元/W，要IRR 10%") == {"target_irr": 0.1}


def test_how_many_years_to_pay_back_is_no_target():
    assert not any(k.startswith("target") for k in parse_target("投资多少年能回本"))
    assert not asks_to_solve("我家屋顶装10kW户用光伏多久能回本")


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("what about 9%?", 9.0, "%"),
        ("那改成8年呢", 8.0, "年"),
        ("换成300万呢", 300.0, "万"),
        ("OK, and with 7.5 percent then", 7.5, "%"),
        ("15", 15.0, ""),
    ],
)
def test_a_fragment_giving_only_a_value_is_a_new_target_value(text, value, unit):
    assert parse_goal(text) == {"goal_value": value, "goal_unit": unit}


@pytest.mark.parametrize(
    "text", ["电价0.7呢", "what about 800 kW?", "自发自用六成呢", "IRR 9%", "Nanjing 12%"]
)
def test_a_value_with_a_name_or_another_unit_is_no_bare_target(text):
    assert parse_goal(text) == {}


def test_a_bare_value_takes_its_target_from_its_unit_or_the_last_target():
    assert goal_target(12.0, "%", "payback") == {"target_irr": pytest.approx(0.12)}
    assert goal_target(8.0, "年", "irr") == {"target_payback": 8.0}
    assert goal_target(300.0, "万", "npv") == {"target_npv": 3_000_000.0}
    assert goal_target(7.0, "", "payback") == {"target_payback": 7.0}
    assert goal_target(11.0, "", "irr") == {"target_irr": pytest.approx(0.11)}
    assert not asks_to_solve("what about 9%?")  # the words alone ask for nothing; the conversation decides


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 多 + an adjective of degree asks how far a variable must go, like 多少
        ("要7年回本，自用比例得多高", {"target_payback": 7.0, "solve_for": "self_consumption"}),
        ("IRR想做到12%，电价要多低才行", {"target_irr": 0.12, "solve_for": "electricity_price"}),
        # a superlative of size applied to the plant is its capacity
        (
            "We want a 12% IRR. What is the largest system we can install?",
            {"target_irr": 0.12, "solve_for": "capacity_kw"},
        ),
        (
            "what's the biggest solar array that still pays back within 6 years?",
            {"target_payback": 6.0, "solve_for": "capacity_kw"},
        ),
        # a price per watt with no amount before it is the cost per watt asked about
        (
            "We need an IRR of 15%. How cheap must it be per watt?",
            {"target_irr": 0.15, "solve_for": "capex_yuan_per_w"},
        ),
        ("每瓦价格最高多少，能8年回本", {"target_payback": 8.0, "solve_for": "capex_yuan_per_w"}),
    ],
)
def test_more_ways_of_naming_the_variable(text, expected):
    assert parse_target(text) == pytest.approx(expected)
    assert asks_to_solve(text)


def test_a_stated_price_per_watt_is_no_variable():
    assert "solve_for" not in parse_target("at 3.5 yuan per watt the IRR should reach 12%")


@pytest.mark.parametrize(
    ("text", "variable"),
    [
        ("上网电价吧", "feed_in_price"),
        ("the self-consumption share", "self_consumption"),
        ("单瓦造价", "capex_yuan_per_w"),
    ],
)
def test_a_bare_name_answers_which_variable(text, variable):
    assert named_variable(text) == variable


@pytest.mark.parametrize("text", ["造价或者电价", "造价2.8元", "IRR 9%"])
def test_two_names_or_a_value_answer_no_variable(text):
    assert named_variable(text) is None


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("And within 5?", 5.0, ""),
        ("至少11%呢", 11.0, "%"),
        ("那9年以内呢", 9.0, "年"),
        ("under 7 years then?", 7.0, "年"),
    ],
)
def test_a_bound_word_beside_a_bare_value_keeps_it_a_new_target_value(text, value, unit):
    # "within", "至少", "以内" say which side of the bound the value is on: still only a target's value
    assert parse_goal(text) == {"goal_value": value, "goal_unit": unit}
