"""How PV results read in Chinese: money in 万元, rates in %, missing values explained."""

from __future__ import annotations

from typing import Any

from tools.pv.resolve import fmt

__all__ = ["conclusion_line", "defaults_lines", "money", "pct", "result_lines", "years"]


def money(yuan: float | None) -> str:
    """元 → "159.00 万元"."""
    return "—" if yuan is None else f"{yuan / 10_000:,.2f} 万元"


def pct(rate: float | None, missing: str = "不存在") -> str:
    """0.0812 → "8.12%"; None → `missing`."""
    return missing if rate is None else f"{rate * 100:.2f}%"


def years(value: float | None) -> str:
    """Payback years, or why there is none."""
    return "运营期内无法回收" if value is None else f"{value:.2f} 年"


def result_lines(case: dict[str, Any]) -> list[str]:
    """The headline results of a case as Markdown bullet lines."""
    v, r = case["inputs"], case["results"]
    lcoe = "—" if r["lcoe"] is None else f"{r['lcoe']:.3f} 元/kWh"
    irr_text = pct(r["irr"], "不存在（运营期内现金流收不回投资）")
    return [
        f"- 总投资：{money(r['investment'])}（{fmt('capex_yuan_per_w', v['capex_yuan_per_w'])}）",
        f"- 首年发电量：{r['first_year_generation_kwh'] / 10_000:,.2f} 万kWh（年等效利用小时数 {v['specific_yield']:g} kWh/kWp）",
        f"- 首年净收益：{money(r['first_year_revenue'] - case['cashflow'][1]['om_cost'])}",
        f"- 净现值 NPV（折现率 {pct(v['discount_rate'])}）：{money(r['npv'])}",
        f"- 内部收益率 IRR：{irr_text}",
        f"- 平准化度电成本 LCOE：{lcoe}",
        f"- 静态回收期：{years(r['payback_static'])}；动态回收期：{years(r['payback_discounted'])}",
    ]


def conclusion_line(case: dict[str, Any]) -> str:
    """One line with the figures an investor asks for first: IRR, NPV, static payback."""
    r = case["results"]
    irr = pct(r["irr"], "不存在")
    return f"结论：IRR {irr}，NPV {money(r['npv'])}，静态回收期 {years(r['payback_static'])}。"


def defaults_lines(case: dict[str, Any]) -> list[str]:
    """One line per default the case used, with its basis."""
    return [f"- {d['label']}：{d['text']}（{d['basis']}）" for d in case.get("defaults_used", [])]
