"""How PV results read for people, in Chinese (万元, 年) or English (yuan, years)."""

from __future__ import annotations

from typing import Any

from tools.lang import pick
from tools.pv.resolve import fmt

__all__ = ["conclusion_line", "defaults_lines", "money", "pct", "result_lines", "years"]


def money(yuan: float | None, lang: str = "zh") -> str:
    """元 → "159.00 万元" ("1,590,000 yuan" in English)."""
    if yuan is None:
        return "—"
    return pick(lang, f"{yuan / 10_000:,.2f} 万元", f"{yuan:,.0f} yuan")


def pct(rate: float | None, missing: str = "不存在") -> str:
    """0.0812 → "8.12%"; None → `missing`."""
    return missing if rate is None else f"{rate * 100:.2f}%"


def years(value: float | None, lang: str = "zh") -> str:
    """Payback years, or why there is none."""
    if value is None:
        return pick(lang, "运营期内无法回收", "not recovered within the lifetime")
    return pick(lang, f"{value:.2f} 年", f"{value:.2f} years")


def result_lines(case: dict[str, Any], lang: str = "zh") -> list[str]:
    """The headline results of a case as Markdown bullet lines."""
    v, r = case["inputs"], case["results"]
    net = r["first_year_revenue"] - case["cashflow"][1]["om_cost"]
    capex = fmt("capex_yuan_per_w", v["capex_yuan_per_w"], lang)
    if lang == "en":
        lcoe = "—" if r["lcoe"] is None else f"{r['lcoe']:.3f} yuan/kWh"
        irr_text = pct(r["irr"], "none (the cash flows never recover the investment)")
        return [
            f"- Investment: {money(r['investment'], lang)} ({capex})",
            f"- First-year generation: {r['first_year_generation_kwh']:,.0f} kWh (specific yield {v['specific_yield']:g} kWh/kWp)",
            f"- First-year net income: {money(net, lang)}",
            f"- NPV (discount rate {pct(v['discount_rate'])}): {money(r['npv'], lang)}",
            f"- IRR: {irr_text}",
            f"- LCOE: {lcoe}",
            f"- Payback: {years(r['payback_static'], lang)} (static); {years(r['payback_discounted'], lang)} (discounted)",
        ]
    lcoe = "—" if r["lcoe"] is None else f"{r['lcoe']:.3f} 元/kWh"
    irr_text = pct(r["irr"], "不存在（运营期内现金流收不回投资）")
    return [
        f"- 总投资：{money(r['investment'])}（{capex}）",
        f"- 首年发电量：{r['first_year_generation_kwh'] / 10_000:,.2f} 万kWh（年等效利用小时数 {v['specific_yield']:g} kWh/kWp）",
        f"- 首年净收益：{money(net)}",
        f"- 净现值 NPV（折现率 {pct(v['discount_rate'])}）：{money(r['npv'])}",
        f"- 内部收益率 IRR：{irr_text}",
        f"- 平准化度电成本 LCOE：{lcoe}",
        f"- 静态回收期：{years(r['payback_static'])}；动态回收期：{years(r['payback_discounted'])}",
    ]


def conclusion_line(case: dict[str, Any], lang: str = "zh") -> str:
    """One line with the figures an investor asks for first: IRR, NPV, static payback."""
    r = case["results"]
    irr = pct(r["irr"], pick(lang, "不存在", "none"))
    if lang == "en":
        return f"In short: IRR {irr}, NPV {money(r['npv'], lang)}, static payback {years(r['payback_static'], lang)}."
    return f"结论：IRR {irr}，NPV {money(r['npv'])}，静态回收期 {years(r['payback_static'])}。"


def defaults_lines(case: dict[str, Any], lang: str = "zh") -> list[str]:
    """One line per default the case used, with its basis (in the language they were resolved in)."""
    form = "- {label}: {text} ({basis})" if lang == "en" else "- {label}：{text}（{basis}）"
    return [form.format(**d) for d in case.get("defaults_used", [])]
