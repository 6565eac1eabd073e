"""The financial model against hand-computed cases and numpy-financial."""

import math

import numpy_financial as npf
import pytest

from tools.pv.economics import irr, lcoe, npv, payback, simulate


def flat_case(**overrides):
    """100 kW × 1000 kWh/kWp, all self-used at 0.5 元/kWh, no O&M, no degradation: 50 000 元/year."""
    inputs = {
        "capacity_kw": 100.0,
        "specific_yield": 1000.0,
        "self_consumption": 1.0,
        "electricity_price": 0.5,
        "feed_in_price": 0.4,
        "om_yuan_per_w_year": 0.0,
        "first_year_degradation": 0.0,
        "annual_degradation": 0.0,
        "lifetime_years": 20,
        "discount_rate": 0.08,
        "capex_yuan_per_w": 1.5,
        "annual_load_kwh": None,
    }
    return {**inputs, **overrides}


def test_flat_cash_flow_has_the_irr_of_its_annuity():
    payment = 1000 * 0.1 / (1 - 1.1**-5)  # 263.797… : the 5-year annuity of 1000 at 10 %
    flows = [-1000.0] + [payment] * 5
    assert irr(flows) == pytest.approx(0.10, abs=1e-9)
    assert irr(flows) == pytest.approx(float(npf.irr(flows)))
    assert npv(0.10, flows) == pytest.approx(0.0, abs=1e-6)


def test_zero_degradation_gives_equal_years_and_the_designed_irr():
    annuity_8pct_20y = (1 - 1.08**-20) / 0.08  # 9.818147
    capex_per_w = 50_000 * annuity_8pct_20y / 100_000
    out = simulate(flat_case(capex_yuan_per_w=capex_per_w))
    years = out["cashflow"][1:]
    assert {row["generation_kwh"] for row in years} == {100_000.0}
    assert [row["net_cash_flow"] for row in years] == pytest.approx([50_000.0] * 20)
    assert out["results"]["irr"] == pytest.approx(0.08, abs=1e-9)
    assert out["results"]["npv"] == pytest.approx(0.0, abs=1e-4)


def test_payback_exactly_at_a_year_boundary():
    assert payback([-300.0, 100.0, 100.0, 100.0, 100.0]) == 3.0
    out = simulate(flat_case(capex_yuan_per_w=1.5))  # 150 000 元 at 50 000 元/year
    assert out["results"]["payback_static"] == pytest.approx(3.0, abs=1e-12)
    assert out["results"]["payback_discounted"] > 3.0


def test_payback_is_interpolated_within_the_year():
    assert payback([-100.0, 40.0, 40.0, 40.0]) == pytest.approx(2.5)
    discounted = payback([-100.0, 60.0, 60.0], rate=0.1)  # 54.545 then 49.587 → 1 + 45.455/49.587
    assert discounted == pytest.approx(1 + (100 - 60 / 1.1) / (60 / 1.21))


def test_irr_that_does_not_exist():
    assert irr([-100.0, -10.0, -10.0]) is None
    assert payback([-100.0, -10.0, -10.0]) is None
    out = simulate(flat_case(om_yuan_per_w_year=0.6))  # O&M 60 000 > revenue 50 000 every year
    assert out["results"]["irr"] is None
    assert out["results"]["payback_static"] is None
    assert out["results"]["npv"] < -150_000


def test_npv_matches_numpy_financial_and_a_hand_loop():
    out = simulate(flat_case(first_year_degradation=0.02, annual_degradation=0.005, om_yuan_per_w_year=0.03))
    flows = [row["net_cash_flow"] for row in out["cashflow"]]
    by_hand = sum(f / 1.08**t for t, f in enumerate(flows))
    assert out["results"]["npv"] == pytest.approx(by_hand)
    assert out["results"]["npv"] == pytest.approx(float(npf.npv(0.08, flows)))
    assert out["results"]["irr"] == pytest.approx(float(npf.irr(flows)))


def test_linear_degradation_and_self_use_capped_by_load():
    out = simulate(flat_case(first_year_degradation=0.02, annual_degradation=0.005, annual_load_kwh=60_000.0))
    rows = out["cashflow"]
    assert rows[1]["generation_kwh"] == pytest.approx(98_000.0)
    assert rows[3]["generation_kwh"] == pytest.approx(100_000 * (1 - 0.02 - 0.01))
    assert rows[1]["self_used_kwh"] == 60_000.0
    assert rows[1]["revenue"] == pytest.approx(60_000 * 0.5 + 38_000 * 0.4)


def test_lcoe_by_hand():
    assert lcoe(1000.0, [0.0, 0.0], [100.0, 100.0], 0.0) == pytest.approx(5.0)
    assert lcoe(1000.0, [10.0], [100.0], 0.1) == pytest.approx((1000 + 10 / 1.1) / (100 / 1.1))
    out = simulate(flat_case(discount_rate=0.0))
    assert out["results"]["lcoe"] == pytest.approx(150_000 / (100_000 * 20))
    assert math.isclose(out["cashflow"][-1]["cumulative"], 20 * 50_000 - 150_000)
