"""reverse_opt — 逆向寻优: which cost, price, self-consumption or capacity reaches a target.

Internal plan: read the target (IRR ≥ x, NPV ≥ x or payback ≤ n years) and the variable to
solve for (`tools.pv_reverse.parse_target`; cost per watt when none is named) → find the base
case like sensitivity does → sample the variable's plausible range and refine the boundary by
bisection → verify by recomputing. Capacity only changes IRR or payback when the site's annual
load caps self-use, so solving for capacity needs the annual load, stated for this request (it
is asked for, never taken silently from an earlier calculation); the capacity itself is not
needed. A target out of reach is reported with the best reachable value; a target met over the
whole plausible range is reported as not limited by the variable, never as a search bound.
"""

from __future__ import annotations

import re
from typing import Any

from nodes.agents._pv import (
    CASE,
    PV_ANSWER_FIELDS,
    PV_INPUTS,
    base_case,
    gather_fields,
    headline_inputs,
    pv_agent,
    save_case,
)
from nodes.kit.registry import AgentSpec, InputField
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.lang import pick
from tools.pv.inputs import normalize, parse_fields
from tools.pv.resolve import Resolution, fmt, label
from tools.pv.reverse import (
    BOUNDS,
    VARIABLES,
    goal_target,
    named_variable,
    parse_goal,
    parse_target,
    solve,
    strip_target,
)
from tools.pv.text import money, pct, years

__all__ = ["AGENT", "REVERSE", "run"]

REVERSE = "pv_reverse"  # results-index kind of a solved target

_KINDS = (("target_irr", "irr"), ("target_npv", "npv"), ("target_payback", "payback"))


def _targets(ctx: StepContext) -> dict[str, Any]:
    keys = ("target_irr", "target_npv", "target_payback", "solve_for", "goal_value", "goal_unit")
    found = {k: v for k, v in ctx.plan_context.items() if k in keys}
    for text in ctx.texts():
        found.update(parse_target(text))
        found.update(parse_goal(text))
    if "solve_for" not in found:  # an answer naming only the variable ("电价", "the feed-in price")
        answers = ctx.plan_context.get("answers", {}).get(str(ctx.seq_no), [])
        named = [v for a in answers if (v := named_variable(str(a)))]
        if named:
            found["solve_for"] = named[-1]
    goal, unit = found.pop("goal_value", None), found.pop("goal_unit", "")
    if goal is not None and not any(key in found for key, _ in _KINDS):
        # only a new value ("and for 12%?"): the last reverse optimisation's target, with this value
        before = ctx.latest_result(REVERSE)
        kind = ((before[1].get("target") or {}).get("kind")) if before else None
        found.update(goal_target(float(goal), str(unit), kind))
    return found


def _carried(ctx: StepContext, target: dict[str, Any]) -> dict[str, Any]:
    """What a follow-up leaves out, from the conversation's latest reverse optimisation.

    "那IRR要10%呢" after solving for the electricity price keeps the variable; "那造价呢" keeps the
    target. Only the target and the variable are carried (a yearly load must be stated anew).
    """
    found = ctx.latest_result(REVERSE)
    if found is None:
        return {}
    before = found[1]
    carried: dict[str, Any] = {}
    if "solve_for" not in target and before.get("variable"):
        carried["solve_for"] = before["variable"]
    goal = before.get("target") or {}
    if not any(key in target for key, _ in _KINDS) and goal.get("kind") and goal.get("value") is not None:
        carried[f"target_{goal['kind']}"] = goal["value"]
    return carried if len(carried) < 2 or _asks_anew(ctx) else {}


def _asks_anew(ctx: StepContext) -> bool:
    """Whether this step's words name neither a target nor a variable but still ask to solve again."""
    return any(_BOUND.search(normalize(text)) for text in ctx.texts())


def run(ctx: StepContext) -> AgentExecResult:
    """Solve for the value that reaches the user's target, or explain why none does."""
    lang = ctx.language
    ctx.emit(pick(lang, "正在解析寻优目标…", "Reading the target…"))
    target = _targets(ctx)
    carried = _carried(ctx, target)
    target = {**carried, **target}
    if carried:
        shown = []
        if "solve_for" in carried:
            shown.append(label(carried["solve_for"], lang))
        shown += [_goal_text(k, target[f"target_{k}"], lang) for _, k in _KINDS if f"target_{k}" in carried]
        ctx.emit(
            pick(lang, "沿用上次逆向寻优的：", "Carried from the last reverse optimisation: ")
            + "; ".join(shown)
        )
    kind, goal = next(((k, target[key]) for key, k in _KINDS if key in target), (None, None))
    if kind is None or goal is None:
        return ctx.interrupted(
            pick(
                lang,
                "请告诉我寻优目标，例如“IRR 达到 8%”“NPV 不低于 100 万元”或“6 年回本”，以及要反推的参数"
                "（造价、电价、上网电价、自发自用比例或装机容量）。",
                "Please tell me the target, e.g. “IRR of 8%”, “NPV of at least 1 million yuan” or “payback "
                "within 6 years”, and what to solve for (cost per watt, electricity price, feed-in price, "
                "self-consumption or capacity).",
            ),
            ["target_irr"],
        )
    variable = target.get("solve_for")
    if variable is None:  # the words name no variable: which one is the user's to say, not a default's
        return ctx.interrupted(
            pick(
                lang,
                f"要达到{_goal_text(kind, goal, lang)}，请告诉我反推哪个参数：单瓦造价、电价、上网电价、自发自用比例"
                "或装机容量（反推装机容量还需要年用电量）。",
                f"To reach {_goal_text(kind, goal, lang)}, which value should I solve for: the cost per watt, the "
                "electricity price, the feed-in price, the self-consumption share or the capacity (the capacity "
                "also needs the yearly consumption)?",
            ),
            ["solve_for"],
        )
    load = gather_fields(ctx, strip_target).get("annual_load_kwh")
    if variable == "capacity_kw" and load is None:
        return ctx.interrupted(
            pick(
                lang,
                "收益和成本都与装机容量成正比，只有当自用电量受厂区年用电量限制时，装机容量才会改变 IRR 和回收期。"
                "要反推装机容量，请告诉我年用电量（如“年用电量200万度”）；或者改为反推造价或电价。",
                "Revenue and cost both scale with capacity, so capacity only changes IRR or payback when the "
                "site's annual consumption caps self-use. To solve for capacity, please tell me the annual "
                "consumption (e.g. “2 million kWh a year”), or solve for the cost per watt or the price instead.",
            ),
            ["annual_load_kwh"],
        )
    purpose = pick(lang, "做逆向寻优", "solve for the target")
    fill = {"capacity_kw": 100.0} if variable == "capacity_kw" else None
    case = base_case(ctx, purpose, strip_target, fill)
    if isinstance(case, Resolution):
        return ctx.interrupted(case.question, case.missing)
    inputs = dict(case["inputs"])
    if load is not None:
        inputs["annual_load_kwh"] = load
    bounds = BOUNDS.get(variable) or (1.0, 100.0 if inputs["project_type"] == "户用" else 50_000.0)
    ctx.emit(
        pick(
            lang,
            f"正在反推{label(variable)}（在 {fmt(variable, bounds[0])}–{fmt(variable, bounds[1])} 内取样并二分细化）…",
            f"Solving for the {label(variable, lang).lower()} (sampling {fmt(variable, bounds[0], lang)}–"
            f"{fmt(variable, bounds[1], lang)}, then bisection)…",
        )
    )
    answer = solve(inputs, variable, kind, goal, bounds)
    output = _summary(inputs, variable, kind, goal, answer, fill is None, lang)
    if carried:
        kept = [label(carried["solve_for"], lang)] if "solve_for" in carried else []
        kept += [_goal_text(kind, goal, lang)] if any(k.startswith("target") for k in carried) else []
        output += pick(
            lang,
            f"\n（沿用上次逆向寻优的：{'、'.join(kept)}）",
            f"\n(Carried from the last reverse optimisation: {', '.join(kept)}.)",
        )
    context = {
        "inputs": headline_inputs(inputs),
        "base": save_case(ctx, case)["case"],
        "variable": variable,
        "target": {"kind": kind, "value": goal},
        **answer,
    }
    ctx.save_result(REVERSE, context, {k: v for k, v in context.items() if k != "inputs"})
    ctx.record_tool_call(
        "pv_reverse", {"inputs": inputs, "variable": variable, "kind": kind, "target": goal}, output, context
    )
    return ctx.result("completed", output, context)


def _goal_text(kind: str, goal: float, lang: str) -> str:
    return {
        "irr": pick(lang, f"IRR 达到 {pct(goal)}", f"an IRR of {pct(goal)}"),
        "npv": pick(lang, f"NPV 不低于 {money(goal)}", f"an NPV of at least {money(goal, lang)}"),
        "payback": pick(lang, f"静态回收期不超过 {goal:g} 年", f"a static payback within {goal:g} years"),
    }[kind]


def _show(kind: str, metric: float | None, lang: str) -> str:
    if kind == "irr":
        return pct(metric, pick(lang, "不存在", "none"))
    return money(metric, lang) if kind == "npv" else years(metric, lang)


def _summary(
    inputs: dict[str, Any],
    variable: str,
    kind: str,
    goal: float,
    answer: dict[str, Any],
    has_current: bool,
    lang: str,
) -> str:
    name, metric_name = (
        label(variable, lang),
        {"irr": "IRR", "npv": "NPV", "payback": pick(lang, "回收期", "payback")}[kind],
    )
    goal_text = _goal_text(kind, goal, lang)
    if not answer["feasible"]:
        where = fmt(variable, answer["best_value"], lang)
        why = ""
        if variable == "electricity_price" and inputs["self_consumption"] == 0:
            why = pick(
                lang,
                "；自发自用比例为 0，全部电量按上网电价结算，自用电价不影响收益",
                "; with 0% self-consumption all energy earns the feed-in price, so the electricity price does not matter",
            )
        return pick(
            lang,
            f"无法实现{goal_text}：在合理范围内，{name}取 {where} 时{metric_name}最好，也只有 "
            f"{_show(kind, answer['best_metric'], lang)}{why}。请调整目标或其他参数。",
            f"{goal_text[0].upper() + goal_text[1:]} is out of reach: over the plausible range the best "
            f"{metric_name} is {_show(kind, answer['best_metric'], lang)} (at {name.lower()} {where}){why}. "
            "Please change the target or other inputs.",
        )
    now = (
        pick(
            lang,
            f"（当前 {fmt(variable, inputs[variable])}）",
            f" (now {fmt(variable, inputs[variable], lang)})",
        )
        if has_current
        else ""
    )
    if answer["unbounded"]:
        achieved = _show(kind, answer["achieved"], lang)
        return pick(
            lang,
            f"{name}不是限制因素：在整个合理范围内都能实现{goal_text}{now}，{metric_name}至少为 {achieved}。",
            f"The {name.lower()} does not limit this: {goal_text} is met over the whole plausible range{now}; "
            f"{metric_name} is at least {achieved}.",
        )
    highest = variable in ("capex_yuan_per_w", "capacity_kw") and not (
        variable == "capacity_kw" and kind == "npv"
    )
    bound = pick(lang, "最高" if highest else "最低", "at most" if highest else "at least")
    value = _rounded(variable, answer["value"], lang)
    return pick(
        lang,
        f"要使{goal_text}，{name}{bound}为 {value}{now}。按此{name}复算：{metric_name} {_show(kind, answer['achieved'], lang)}。",
        f"For {goal_text}, the {name.lower()} must be {bound} {value}{now}. Recomputed at that value: "
        f"{metric_name} {_show(kind, answer['achieved'], lang)}.",
    )


def _rounded(variable: str, value: float, lang: str) -> str:
    if variable == "self_consumption":
        return f"{value * 100:.1f}%"
    digits = 1 if variable == "capacity_kw" else 3
    unit = fmt(variable, 1.0, lang).split(" ", 1)[-1]
    return f"{value:,.{digits}f} {unit}"


_BOUND = re.compile(
    r"最高|最低|最大|最小|最多|最少|上限|下限|至少|至多|起码|反推|倒推|寻优|反算|(?:降|压|涨|提|升|控制|调)(?:到|在|至)多少"
    r"|(?:得|要|需要|必须|应该|能)多(?:高|低|大|小|便宜|贵)"  # "自用比例得多高": how far it must go
    r"|maximum|minimum|at (?:most|least)",
    re.I,
)


def asks_to_solve(text: str) -> bool:
    """True when the words set a target, or ask for a variable's bound (not state its value)."""
    target = parse_target(text)
    if any(k.startswith("target") for k in target):
        return True
    stripped = strip_target(text)
    return "solve_for" in target and bool(_BOUND.search(stripped)) and not re.search(r"\d", stripped)


def parse_answer(text: str) -> dict[str, Any]:
    """Target, variable and calculation fields in a user's answer ("电价", "the feed-in price": the variable)."""
    found = {**parse_fields(strip_target(text)), **parse_target(text), **parse_goal(text)}
    if "solve_for" not in found and (variable := named_variable(text)) is not None:
        found["solve_for"] = variable
    return found


AGENT = AgentSpec(
    name="reverse_opt",
    description="逆向寻优 reverse optimisation：给定目标内部收益率IRR或投资回收期，反推光伏项目的最高造价、最低电价或最大装机容量，"
    "并判断目标是否可达。",
    run=pv_agent(run),
    examples=(
        "造价降到多少才能让IRR达到8%",
        "电价最低多少能6年回本",
        "要让内部收益率达到10%，单瓦造价最高多少",
        "反推装机容量，目标收益率8%",
        "逆向寻优：投资回收期控制在5年以内需要什么造价",
        "what is the highest cost per watt that still gives the target return",
        "the lowest tariff for a given payback period",
    ),
    inputs=(
        InputField(
            "target_irr", "寻优目标，例如“IRR 达到 8%”“NPV 不低于 100 万元”或“6 年回本”", kind="number"
        ),
        InputField(
            "solve_for",
            "要反推的参数：造价、电价、上网电价、自发自用比例或装机容量",
            required=False,
            choices=tuple(dict.fromkeys(VARIABLES.values())),
        ),
    ),
    answer_fields=(
        InputField("target_npv", "目标净现值（元）", required=False, kind="number"),
        InputField("target_payback", "目标回收期（年）", required=False, kind="number"),
        *PV_INPUTS,
        *PV_ANSWER_FIELDS,
    ),
    parse_answer=parse_answer,
    produces=(REVERSE,),
    consumes=(CASE,),
    claims=asks_to_solve,
    tools=("pv_economics", "pv_reverse"),
    internal_plan="reverse_opt.dot",
)
