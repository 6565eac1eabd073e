"""The PV financial model: year-by-year generation and cash flow, NPV, IRR, LCOE, payback.

Assumptions (stated in every report): all-equity, pre-tax, no residual value, flat prices and
O&M over the lifetime. Generation in year t = capacity × specific yield × (1 − first-year
degradation − annual degradation × (t − 1)) (linear, as module warranties are written).
Self-used energy = generation × self-consumption ratio, capped by the annual load when given;
it earns the electricity price, the rest earns the feed-in price. NPV and IRR come from
numpy-financial; NPV discounts year t by (1 + r)^t with the investment at t = 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy_financial as npf

__all__ = ["irr", "lcoe", "npv", "payback", "simulate"]


def npv(rate: float, flows: Sequence[float]) -> float:
    """Net present value of `flows` (flows[0] at t = 0)."""
    return float(npf.npv(rate, list(flows)))


def irr(flows: Sequence[float]) -> float | None:
    """Internal rate of return, or None when no rate makes the NPV zero (e.g. never pays back)."""
    if not any(f > 0 for f in flows) or not any(f < 0 for f in flows):
        return None
    value = float(npf.irr(list(flows)))
    return value if math.isfinite(value) else None


def payback(flows: Sequence[float], rate: float = 0.0) -> float | None:
    """Years until the cumulative (discounted at `rate`) cash flow reaches zero.

    Interpolated within the year; exactly `t` when it reaches zero at the end of year t; None if
    it never does within the lifetime.
    """
    cumulative = 0.0
    for year, flow in enumerate(flows):
        value = flow / (1 + rate) ** year
        if cumulative < 0 <= cumulative + value + 1e-9 * abs(value):
            return year - 1 + min(1.0, -cumulative / value)
        cumulative += value
    return 0.0 if flows and cumulative >= 0 else None


def lcoe(investment: float, costs: Sequence[float], energy: Sequence[float], rate: float) -> float | None:
    """Levelised cost (元/kWh): (investment + PV of yearly costs) / PV of yearly energy (years 1…n)."""
    factors = [(1 + rate) ** -(year + 1) for year in range(len(energy))]
    discounted_energy = sum(e * f for e, f in zip(energy, factors, strict=True))
    if discounted_energy <= 0:
        return None
    return (investment + sum(c * f for c, f in zip(costs, factors, strict=True))) / discounted_energy


def simulate(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Run the model on resolved inputs (see `tools.pv.resolve`): `{"results", "cashflow"}`."""
    cap_kw, rate = float(inputs["capacity_kw"]), float(inputs["discount_rate"])
    investment = float(inputs["capex_yuan_per_w"]) * cap_kw * 1000
    om = float(inputs["om_yuan_per_w_year"]) * cap_kw * 1000
    load = inputs.get("annual_load_kwh")
    rows: list[dict[str, float]] = [_row(0, 0.0, 0.0, 0.0, 0.0, -investment)]
    for year in range(1, int(inputs["lifetime_years"]) + 1):
        factor = max(0.0, 1 - inputs["first_year_degradation"] - inputs["annual_degradation"] * (year - 1))
        generation = cap_kw * float(inputs["specific_yield"]) * factor
        self_used = generation * float(inputs["self_consumption"])
        if load is not None:
            self_used = min(self_used, float(load))
        revenue = self_used * inputs["electricity_price"] + (generation - self_used) * inputs["feed_in_price"]
        rows.append(_row(year, generation, self_used, revenue, om, revenue - om))
    flows = [r["net_cash_flow"] for r in rows]
    cumulative = discounted = 0.0
    for row in rows:
        cumulative += row["net_cash_flow"]
        discounted += row["net_cash_flow"] / (1 + rate) ** row["year"]
        row.update(cumulative=round(cumulative, 2), cumulative_discounted=round(discounted, 2))
    energy = [r["generation_kwh"] for r in rows[1:]]
    results = {
        "investment": investment,
        "first_year_generation_kwh": energy[0] if energy else 0.0,
        "total_generation_kwh": sum(energy),
        "first_year_revenue": rows[1]["revenue"] if len(rows) > 1 else 0.0,
        "npv": npv(rate, flows),
        "irr": irr(flows),
        "lcoe": lcoe(investment, [om] * len(energy), energy, rate),
        "payback_static": payback(flows),
        "payback_discounted": payback(flows, rate),
    }
    return {"results": results, "cashflow": rows}


def _row(
    year: int, generation: float, self_used: float, revenue: float, om: float, net: float
) -> dict[str, float]:
    return {
        "year": year,
        "generation_kwh": round(generation, 2),
        "self_used_kwh": round(self_used, 2),
        "exported_kwh": round(generation - self_used, 2),
        "revenue": round(revenue, 2),
        "om_cost": round(om, 2),
        "net_cash_flow": net,
    }
