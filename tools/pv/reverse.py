"""Reverse optimisation: the capex, electricity price or capacity that reaches a target IRR or payback.

Each metric is monotonic in each variable (IRR falls as capex rises, rises with the price, and
falls with capacity once generation exceeds the site's load), so a feasibility check at the
search bounds followed by bisection finds the boundary value, or proves the target unreachable.
"""

from __future__ import annotations

import re
from typing import Any

from tools.pv.economics import simulate
from tools.pv.inputs import normalize

__all__ = ["BOUNDS", "parse_target", "solve", "strip_target"]

_N = r"(\d+(?:\.\d+)?)"
_IRR = (
    re.compile(rf"(?:irr|内部收益率|(?<!基准)收益率)[要需目标达到不低于至少为是:≥>=\s]*{_N}\s*%"),
    re.compile(rf"{_N}\s*%\s*的?(?:irr|内部收益率|收益率)(?!\s*\d)"),
)
_PAYBACK = (
    re.compile(
        rf"(?:投资回收期|回收期|回本期|回收年限|回本)[要需目标达到缩短至不超过高于控制在为是:≤<=\s]*{_N}\s*年(?:以内|内)?"
    ),
    re.compile(rf"{_N}\s*年(?:以内|内)?(?:回本|收回投资)"),
)
_VARIABLE = (
    re.compile(
        r"(单瓦造价|造价|投资|成本|电价|装机容量|容量|规模)[^,，。;；\d]{0,8}?(?:多少|几|最高|最低|最大|最小|上限|下限|需要|应|要降|要到|能到|降到|提高到)"
    ),
    re.compile(
        r"(?:反推|倒推|求|寻优|优化|算出|计算)[^,，。;；]{0,6}?(单瓦造价|造价|投资|电价|装机容量|容量|规模)"
    ),
)
_WORD_TO_VARIABLE = {
    "单瓦造价": "capex_yuan_per_w",
    "造价": "capex_yuan_per_w",
    "投资": "capex_yuan_per_w",
    "成本": "capex_yuan_per_w",
    "电价": "electricity_price",
    "装机容量": "capacity_kw",
    "容量": "capacity_kw",
    "规模": "capacity_kw",
}
# Search range per variable (capex below 1 元/W is not a real PV system); capacity depends on
# the project type (see tools.pv.resolve checks).
BOUNDS: dict[str, tuple[float, float]] = {"capex_yuan_per_w": (1.0, 15.0), "electricity_price": (0.0, 5.0)}


def strip_target(text: str) -> str:
    """`text` (normalized) without its target phrases, so "回收期6年" is not read as a lifetime."""
    text = normalize(text)
    for pattern in (*_IRR, *_PAYBACK):
        text = pattern.sub(" ", text)
    return text


def parse_target(text: str) -> dict[str, Any]:
    """`{"target_irr": 0.08}` or `{"target_payback": 6.0}`, plus `"solve_for"` when named."""
    text = normalize(text)
    found: dict[str, Any] = {}
    for key, patterns, scale in (("target_irr", _IRR, 0.01), ("target_payback", _PAYBACK, 1.0)):
        if match := next((m for p in patterns if (m := p.search(text))), None):
            found[key] = float(match[1]) * scale
    rest = strip_target(text)
    hits = [(m.start(), m[1]) for p in _VARIABLE for m in p.finditer(rest)]
    if hits:
        found["solve_for"] = _WORD_TO_VARIABLE[min(hits)[1]]
    return found


def _metric(inputs: dict[str, Any], variable: str, value: float, kind: str) -> float | None:
    results = simulate({**inputs, variable: value})["results"]
    return results["irr"] if kind == "irr" else results["payback_static"]


def _meets(metric: float | None, kind: str, target: float) -> bool:
    if metric is None:
        return False
    return metric >= target if kind == "irr" else metric <= target + 1e-9


def solve(
    inputs: dict[str, Any], variable: str, kind: str, target: float, bounds: tuple[float, float]
) -> dict[str, Any]:
    """Boundary value of `variable` where metric `kind` ("irr" | "payback") meets `target`.

    Returns `{"feasible", "value", "achieved", "best_value", "best_metric"}`; `value` is the
    highest capex / capacity or the lowest price that still meets the target.
    """
    low, high = bounds
    good_end, bad_end = (low, high) if variable != "electricity_price" else (high, low)
    best = _metric(inputs, variable, good_end, kind)
    if not _meets(best, kind, target):
        return {
            "feasible": False,
            "value": None,
            "achieved": None,
            "best_value": good_end,
            "best_metric": best,
        }
    if _meets(_metric(inputs, variable, bad_end, kind), kind, target):
        value = bad_end
    else:
        good, bad = good_end, bad_end
        for _ in range(60):
            mid = (good + bad) / 2
            good, bad = (
                (mid, bad) if _meets(_metric(inputs, variable, mid, kind), kind, target) else (good, mid)
            )
            if abs(bad - good) < 1e-6 * max(1.0, abs(good)):
                break
        value = good
    return {
        "feasible": True,
        "value": value,
        "achieved": _metric(inputs, variable, value, kind),
        "best_value": good_end,
        "best_metric": best,
    }
