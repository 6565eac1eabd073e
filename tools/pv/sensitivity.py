"""Sensitivity of IRR and NPV to the five drivers of a PV case, at ±10 % and ±20 %."""

from __future__ import annotations

from typing import Any

from tools.pv.economics import simulate
from tools.pv.resolve import fmt
from tools.pv.text import money, pct

__all__ = ["CHANGES", "VARIABLES", "sensitivity_table", "table_markdown"]

# (input field, Chinese label, English label for charts without a CJK font)
VARIABLES: tuple[tuple[str, str, str], ...] = (
    ("capex_yuan_per_w", "单瓦造价", "Capex"),
    ("electricity_price", "自用电价", "Electricity price"),
    ("specific_yield", "年等效利用小时数", "Specific yield"),
    ("self_consumption", "自发自用比例", "Self-consumption"),
    ("discount_rate", "折现率", "Discount rate"),
)
CHANGES: tuple[float, ...] = (-0.2, -0.1, 0.1, 0.2)


def sensitivity_table(inputs: dict[str, Any]) -> dict[str, Any]:
    """`{"rows": one per variable and change, "tornado": NPV at −20 % / +20 % per variable}`.

    Self-consumption is capped at 100 %; a capped row says so in `note`.
    """
    rows: list[dict[str, Any]] = []
    tornado: list[dict[str, Any]] = []
    for name, label, label_en in VARIABLES:
        npv_by_change: dict[float, float] = {}
        for change in CHANGES:
            value = inputs[name] * (1 + change)
            note = ""
            if name == "self_consumption" and value > 1:
                value, note = 1.0, "已封顶为100%"
            elif name == "discount_rate":
                note = "折现率只影响NPV，不影响IRR"
            results = simulate({**inputs, name: value})["results"]
            npv_by_change[change] = results["npv"]
            rows.append(
                {
                    "variable": name,
                    "label": label,
                    "change": change,
                    "value": value,
                    "irr": results["irr"],
                    "npv": results["npv"],
                    "note": note,
                }
            )
        tornado.append(
            {
                "variable": name,
                "label": label,
                "label_en": label_en,
                "npv_low": npv_by_change[-0.2],
                "npv_high": npv_by_change[0.2],
            }
        )
    return {"rows": rows, "tornado": tornado}


_NOTES_EN = {"已封顶为100%": "capped at 100%", "折现率只影响NPV，不影响IRR": "changes NPV only, not IRR"}


def table_markdown(table: dict[str, Any], base: dict[str, Any], lang: str = "zh") -> str:
    """The table as Markdown: one line per variable, IRR / NPV at each change."""
    en = lang == "en"
    names = {name: label_en for name, _, label_en in VARIABLES}
    head = (
        "| Variable | Change | Value | IRR | NPV | Note |"
        if en
        else "| 变量 | 变动 | 取值 | IRR | NPV | 备注 |"
    ) + "\n|---|---|---|---|---|---|"
    base_line = (
        f"| {'Base case' if en else '基准'} | 0% | — | {pct(base['irr'])} | {money(base['npv'], lang)} | |"
    )
    lines = [
        f"| {names[r['variable']] if en else r['label']} | {r['change'] * 100:+.0f}% | "
        f"{fmt(r['variable'], r['value'], lang)} | {pct(r['irr'])} | {money(r['npv'], lang)} | "
        f"{_NOTES_EN.get(r['note'], r['note']) if en else r['note']} |"
        for r in table["rows"]
    ]
    return "\n".join([head, base_line, *lines])
