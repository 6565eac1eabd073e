"""Reverse optimisation: the value of one input that reaches a target IRR, NPV or payback.

Variables: cost per watt, electricity price, feed-in price, self-consumption, and capacity (which
only matters when the site's annual load caps self-use). Targets: IRR ≥ x, NPV ≥ x, static
payback ≤ n years. The metric is sampled over the variable's plausible range and the boundary is
refined by bisection, so a target is either met (with the boundary value), met everywhere in
the range (`unbounded`: the variable does not limit it — never reported as a number), or
unreachable (with the best reachable metric and where it is reached).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from tools.pv.economics import simulate
from tools.pv.inputs import normalize
from tools.pv.resolve import PLAUSIBLE

__all__ = [
    "BOUNDS",
    "VARIABLES",
    "goal_target",
    "named_variable",
    "parse_goal",
    "parse_target",
    "solve",
    "strip_target",
]

_N = r"((?:(?<![\d.])-)?\d+(?:\.\d+)?)"
_IRR = (
    re.compile(rf"(?:irr|内部收益率|(?<!基准)收益率)[^\d,，。;；%]{{0,8}}?{_N}\s*%"),
    re.compile(rf"{_N}\s*%\s*的?(?:irr|内部收益率|收益率)(?!\s*\d)"),
)
# not "the NPV of 600 kW" / "NPV for an 11 kWp array": a figure followed by a capacity or energy unit is the
# project's size
_NPV = (
    re.compile(
        rf"(?:npv|净现值)[^\d,，。;；%]{{0,8}}?{_N}\s*(亿|万)?\s*元?(?!\s*(?:[\d%]|[kmg]?w[hp]?\b|千瓦|兆瓦|瓦|度))"
    ),
)
_PAYBACK = (
    re.compile(
        rf"(?:投资回收期|回收期|回本期|回收年限|回本)[^\d,，。;；%]{{0,8}}?{_N}\s*年(?:以内|之内|内)?"
    ),
    re.compile(
        rf"{_N}\s*年\s*(?:以内|之内|内)?\s*(?:就|能|可以|才能|便|就能|就可以)?\s*(?:回本|回收期|收回投资)"
    ),
)
_NPV_POSITIVE = re.compile(
    r"(?:npv|净现值)[^\d,，。;；%]{0,6}?(?:转正|为正|大于零|大于0|不为负|positive|above zero|>\s*0)"
    r"|positive (?:npv|net present value)"
)
# Words naming each variable, longest first (上网电价 before 电价).
VARIABLES: dict[str, str] = {
    "自发自用比例": "self_consumption",
    "自发自用率": "self_consumption",
    "自发自用": "self_consumption",
    "自用比例": "self_consumption",
    "消纳比例": "self_consumption",
    "上网电价": "feed_in_price",
    "燃煤基准价": "feed_in_price",
    "单瓦造价": "capex_yuan_per_w",
    "单瓦价格": "capex_yuan_per_w",
    "每瓦价格": "capex_yuan_per_w",
    "单瓦": "capex_yuan_per_w",
    "每瓦": "capex_yuan_per_w",
    "造价": "capex_yuan_per_w",
    "投资": "capex_yuan_per_w",
    "成本": "capex_yuan_per_w",
    "电价": "electricity_price",
    "装机容量": "capacity_kw",
    "装机规模": "capacity_kw",
    "容量": "capacity_kw",
    "规模": "capacity_kw",
    "装多大": "capacity_kw",
    "装机": "capacity_kw",
    "装多少": "capacity_kw",
}
_WORDS = "|".join(sorted(VARIABLES, key=len, reverse=True))
# "多" before an adjective of degree asks how much ("得多高", "要多便宜", "能多大"), as 多少 does
_DEGREE = r"多(?:高|低|大|小|便宜|贵|长|短)"
_ASKED = _DEGREE + r"|多少|多大|几|最高|最低|最大|最小|上限|下限|需要|应|要降|要到|能到|降到|提高到|至少|起码"
_VARIABLE = (
    re.compile(rf"({_WORDS})[^,，。;；\d]{{0,8}}?(?:{_ASKED})"),
    re.compile(rf"(?:多少|多大|最高|最低|最大|最小|怎样的|什么样的?)[^,，。;；\d]{{0,12}}?({_WORDS})"),
    re.compile(rf"(?:反推|倒推|求|寻优|优化|算出|计算)[^,，。;；]{{0,8}}?({_WORDS})"),
    re.compile(r"(装多大|装多少)"),  # the words ask already
    # "the optimal capacity", "最佳装机容量", "最合适的装机规模": the value sought
    re.compile(rf"(?:最佳|最优|最合适|最理想|合适|理想)的?\s*({_WORDS})"),
)
# Breaking even without a number of years ("保本", "不亏本", "break even"): an NPV of at least zero.
_BREAK_EVEN = re.compile(r"保本|不亏|不赔|回本|收回成本|收回投资")
_LIMIT = re.compile(r"最高|最低|最大|最小|最多|最少|至少|至多|上限|下限|起码|到多少")
# A variable's name with no value after it ("上网电价" in "上网电价多少合适", not "造价3元/W").
_UNVALUED = re.compile(rf"({_WORDS})(?![^,，。;；]{{0,6}}?\d)")
# Search range per variable: the range a calculation accepts as plausible (`tools.pv.resolve.PLAUSIBLE`),
# so an answer is always a value the user could enter (a feed-in price of 1.47 yuan/kWh for a 50% IRR is
# out of reach, not an answer); capacity depends on the project type (see reverse_opt).
BOUNDS: dict[str, tuple[float, float]] = {
    name: PLAUSIBLE[name]
    for name in ("capex_yuan_per_w", "electricity_price", "feed_in_price", "self_consumption")
}
# The answer is the highest value that still meets the target for these, else the lowest.
_HIGHEST = frozenset({"capex_yuan_per_w", "capacity_kw"})


def strip_target(text: str) -> str:
    """`text` (normalized) without its target phrases, so "回收期6年" is not read as a lifetime."""
    text = normalize(text)
    for pattern in (*_IRR, *_NPV, _NPV_POSITIVE, *_PAYBACK):
        text = pattern.sub(" ", text)
    return text


# A price per watt with no amount before it ("how cheap per watt", "what can I pay per watt") is the
# cost per watt asked about; "3.5 yuan per watt" states it.
_PER_WATT = re.compile(r"(?<![\d.元\s])\s*/w(?:p)?\b")


def parse_target(text: str) -> dict[str, Any]:
    """`{"target_irr": 0.08}`, `{"target_npv": 1e6}` or `{"target_payback": 6.0}`, plus `"solve_for"`."""
    text = _PER_WATT.sub(" 单瓦造价", normalize(text))
    found: dict[str, Any] = {}
    if match := next((m for p in _IRR if (m := p.search(text))), None):
        found["target_irr"] = float(match[1]) / 100
    if match := next((m for p in _NPV if (m := p.search(text))), None):
        found["target_npv"] = float(match[1]) * {"亿": 1e8, "万": 1e4}.get(match[2] or "", 1)
    elif _NPV_POSITIVE.search(text):  # "NPV转正", "a positive NPV": at least zero
        found["target_npv"] = 0.0
    if match := next((m for p in _PAYBACK if (m := p.search(text))), None):
        found["target_payback"] = float(match[1])
    rest = strip_target(text)
    hits = [(m.start(1), m[1]) for p in _VARIABLE for m in p.finditer(rest)]
    if hits:
        found["solve_for"] = VARIABLES[min(hits)[1]]
    if (
        "solve_for" in found
        and not any(k.startswith("target") for k in found)
        and _BREAK_EVEN.search(rest)
        and _LIMIT.search(rest)
    ):
        found["target_npv"] = 0.0  # "造价最高多少才能保本": the bound where the project stops losing money
    elif any(k.startswith("target") for k in found) and "solve_for" not in found:
        # a target and one variable named without a value ("feed-in price for a 7% IRR?"): that one
        named = {VARIABLES[m[1]] for m in _UNVALUED.finditer(rest)}
        if len(named) == 1:
            found["solve_for"] = named.pop()
    return found


def named_variable(text: str) -> str | None:
    """The one variable `text` names without a value ("造价", "the feed-in price"), else None.

    An answer to "which value should I solve for?" names it and nothing else; "造价3元" states a
    value, and two names ("造价还是电价") leave the choice open.
    """
    named = {
        VARIABLES[m[1]] for m in _UNVALUED.finditer(strip_target(_PER_WATT.sub(" 单瓦造价", normalize(text))))
    }
    return named.pop() if len(named) == 1 else None


# A fragment giving only a new value for the target ("and for 12%?", "那15%呢", "what about 8 years?",
# "换成500万呢"): a number with the unit of a target, and nothing but connectives and suppositions.
_FILLER = (
    r"(?:and|so|ok|okay|then|what about|how about|for|if|with|at|instead|try|say|now|maybe|"
    r"那|那么|那就|如果|要是|假如|假设|换成|改成|改为|目标|再|就|呢|的话|吧|呀|啊|呐|是|要|达到|到|"
    # which side of the bound ("and within 5?", "至少10%呢", "8年以内呢"): part of the target, not another value
    r"within|under|below|above|over|at least|at most|no more than|less than|more than|"
    r"不超过|不到|以内|之内|内|至少|不低于|不少于|以上|以下)"
)
_GOAL_ONLY = re.compile(
    rf"^(?:{_FILLER}\s*)*(?:约\s*)?(\d+(?:\.\d+)?)\s*(%|percent|年|years?|亿元?|万元?|元|yuan|million)?\s*(?:{_FILLER}\s*)*$"
)


def parse_goal(text: str) -> dict[str, Any]:
    """`{"goal_value": 12.0, "goal_unit": "%"}` when `text` gives only a target's value; else {}.

    Which target it is (IRR, NPV or payback) follows from its unit or from the last reverse
    optimisation (`goal_target`): a fragment names no target of its own.
    """
    plain = unicodedata.normalize("NFKC", text).lower()
    plain = re.sub(r"百分之(\d+(?:\.\d+)?)", r"\1%", plain)
    plain = re.sub(r"(?:[?？!！。,，;；~…\s]|\.(?!\d))+", " ", plain).strip()  # not the point of "7.5"
    match = _GOAL_ONLY.match(plain)
    if match is None:
        return {}
    unit = {"percent": "%", "years": "年", "year": "年", "yuan": "元", "million": "百万"}.get(
        match[2] or "", match[2] or ""
    )
    return {"goal_value": float(match[1]), "goal_unit": unit}


def goal_target(value: float, unit: str, kind_before: str | None) -> dict[str, float]:
    """The target a bare value sets: by its unit, else as the last target's kind (IRR when none)."""
    scale = {"亿": 1e8, "亿元": 1e8, "万": 1e4, "万元": 1e4, "元": 1.0, "百万": 1e6}
    if unit == "%" or (not unit and kind_before in (None, "irr")):
        return {"target_irr": value / 100 if unit == "%" or value > 1 else value}
    if unit == "年" or (not unit and kind_before == "payback"):
        return {"target_payback": value}
    return {"target_npv": value * scale.get(unit, 1.0)}


def _metric(inputs: dict[str, Any], variable: str, value: float, kind: str) -> float | None:
    results = simulate({**inputs, variable: value})["results"]
    return {"irr": results["irr"], "npv": results["npv"], "payback": results["payback_static"]}[kind]


def _meets(metric: float | None, kind: str, target: float) -> bool:
    if metric is None:
        return False
    return metric <= target + 1e-9 if kind == "payback" else metric >= target - 1e-9


def _better(a: float | None, b: float | None, kind: str) -> bool:
    """True when metric `a` is better than `b` (None = no IRR / never pays back: the worst)."""
    if a is None:
        return False
    if b is None:
        return True
    return a < b if kind == "payback" else a > b


def _grid(variable: str, low: float, high: float, n: int = 81) -> list[float]:
    if variable == "capacity_kw" and low > 0:
        return [low * (high / low) ** (i / (n - 1)) for i in range(n)]
    return [low + (high - low) * i / (n - 1) for i in range(n)]


def solve(
    inputs: dict[str, Any], variable: str, kind: str, target: float, bounds: tuple[float, float]
) -> dict[str, Any]:
    """Boundary value of `variable` where metric `kind` ("irr" | "npv" | "payback") meets `target`.

    Returns `{"feasible", "value", "achieved", "unbounded", "best_value", "best_metric"}`. `value`
    is the highest cost per watt / capacity or the lowest price / self-consumption that still
    meets the target; `unbounded` means the target is met up to the end of the plausible range
    (the variable does not limit it, `value` is None). When infeasible, `best_metric` is the
    best the variable can reach and `best_value` where (for capacity: the largest such value).
    """
    xs = _grid(variable, *bounds)
    metrics = [_metric(inputs, variable, x, kind) for x in xs]
    best = 0
    for i, m in enumerate(metrics):
        if _better(m, metrics[best], kind):
            best = i
    top = metrics[best]
    plateau = [
        i
        for i, m in enumerate(metrics)
        if m is not None and top is not None and abs(m - top) <= 1e-9 * max(1.0, abs(m))
    ]
    best_value = xs[max(plateau)] if variable in _HIGHEST and plateau else xs[best]
    ok = [i for i, m in enumerate(metrics) if _meets(m, kind, target)]
    base = {"best_value": best_value, "best_metric": metrics[best]}
    if not ok:
        return {"feasible": False, "value": None, "achieved": None, "unbounded": False, **base}
    highest = variable in _HIGHEST and not (variable == "capacity_kw" and kind == "npv")
    edge = max(ok) if highest else min(ok)
    beyond = edge + 1 if highest else edge - 1
    if not 0 <= beyond < len(xs):
        return {"feasible": True, "value": None, "achieved": metrics[edge], "unbounded": True, **base}
    good, bad = xs[edge], xs[beyond]
    for _ in range(60):
        mid = (good + bad) / 2
        good, bad = (mid, bad) if _meets(_metric(inputs, variable, mid, kind), kind, target) else (good, mid)
        if abs(bad - good) < 1e-6 * max(1.0, abs(good)):
            break
    return {
        "feasible": True,
        "value": good,
        "achieved": _metric(inputs, variable, good, kind),
        "unbounded": False,
        **base,
    }
