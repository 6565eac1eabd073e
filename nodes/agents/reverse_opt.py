"""reverse_opt — 逆向寻优: which capex, electricity price or capacity reaches a target IRR or payback.

Internal plan: read the target and the variable to solve for (`tools.pv.reverse.parse_target`;
capex when none is named) → find the base case like sensitivity does → check feasibility at the
search bounds → bisection → verify by recomputing. Capacity only changes IRR or payback when
the site's annual load caps self-use, so solving for capacity asks for the annual load.
"""

from __future__ import annotations

import re
from typing import Any

from nodes.agents._pv import CASE, base_case, gather_fields, headline_inputs, pv_agent, save_case
from nodes.kit.registry import AgentSpec, InputField
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.pv.inputs import parse_fields
from tools.pv.resolve import LABELS, Resolution, fmt
from tools.pv.reverse import BOUNDS, parse_target, solve, strip_target
from tools.pv.text import pct, years

__all__ = ["AGENT", "REVERSE", "run"]

REVERSE = "pv_reverse"  # results-index kind of a solved target


def _targets(ctx: StepContext) -> dict[str, Any]:
    found = {k: v for k, v in ctx.plan_context.items() if k in ("target_irr", "target_payback", "solve_for")}
    for text in ctx.texts():
        found.update(parse_target(text))
    return found


def run(ctx: StepContext) -> AgentExecResult:
    """Solve for the value that reaches the user's target, or explain why none does."""
    ctx.emit("正在解析寻优目标…")
    target = _targets(ctx)
    if "target_irr" not in target and "target_payback" not in target:
        return ctx.interrupted(
            "请告诉我寻优目标，例如“IRR 达到 8%”或“6 年回本”，以及要反推的参数（造价、电价或装机容量）。",
            ["target_irr"],
        )
    case = base_case(ctx, "做逆向寻优", strip_target)
    if isinstance(case, Resolution):
        return ctx.interrupted(case.question, case.missing)
    inputs = dict(case["inputs"])
    if (load := gather_fields(ctx, strip_target).get("annual_load_kwh")) is not None:
        inputs["annual_load_kwh"] = load
    variable = target.get("solve_for", "capex_yuan_per_w")
    kind, goal = (
        ("irr", target["target_irr"]) if "target_irr" in target else ("payback", target["target_payback"])
    )
    if variable == "capacity_kw" and inputs.get("annual_load_kwh") is None:
        return ctx.interrupted(
            "按当前模型，收益和成本都与装机容量成正比，装机容量本身不改变 IRR 和回收期。要反推装机容量，"
            "请告诉我厂区的年用电量（如“年用电量200万度”）；或者改为反推造价或电价。",
            ["annual_load_kwh"],
        )
    bounds = BOUNDS.get(variable) or (1.0, 100.0 if inputs["project_type"] == "户用" else 50_000.0)
    ctx.emit(
        f"正在用二分法反推{LABELS[variable][0]}（搜索范围 {fmt(variable, bounds[0])}–{fmt(variable, bounds[1])}）…"
    )
    answer = solve(inputs, variable, kind, goal, bounds)
    output = _summary(inputs, variable, kind, goal, answer)
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


def _summary(inputs: dict[str, Any], variable: str, kind: str, goal: float, answer: dict[str, Any]) -> str:
    label, now = LABELS[variable][0], fmt(variable, inputs[variable])
    goal_text = f" IRR 达到 {pct(goal)}" if kind == "irr" else f"静态回收期不超过 {goal:g} 年"
    show = (lambda m: pct(m)) if kind == "irr" else years
    if not answer["feasible"]:
        why = (
            "；自发自用比例为 0，全部电量按上网电价结算，自用电价不影响收益"
            if variable == "electricity_price" and inputs["self_consumption"] == 0
            else ""
        )
        return (
            f"无法实现{goal_text}：即使{label}取到 {fmt(variable, answer['best_value'])}，"
            f"{'IRR' if kind == 'irr' else '回收期'}也只有 {show(answer['best_metric'])}{why}。请调整目标或其他参数。"
        )
    bound = "最高" if variable != "electricity_price" else "最低"
    return (
        f"要使{goal_text}，{label}{bound}为 {_rounded(variable, answer['value'])}（当前 {now}）。"
        f"按此{label}复算：{'IRR' if kind == 'irr' else '静态回收期'} {show(answer['achieved'])}。"
    )


def _rounded(variable: str, value: float) -> str:
    digits = 1 if variable == "capacity_kw" else 3
    return f"{value:,.{digits}f} {LABELS[variable][1]}"


_BOUND = re.compile(
    r"最高|最低|最大|最小|上限|下限|至少|至多|反推|倒推|寻优|反算|maximum|minimum|at (?:most|least)", re.I
)


def asks_to_solve(text: str) -> bool:
    """True when the words set a target, or ask for a variable's bound (not state its value)."""
    target = parse_target(text)
    if any(k.startswith("target") for k in target):
        return True
    stripped = strip_target(text)
    return "solve_for" in target and bool(_BOUND.search(stripped)) and not re.search(r"\d", stripped)


def parse_answer(text: str) -> dict[str, Any]:
    """Target, variable and calculation fields in a user's answer."""
    return {**parse_fields(strip_target(text)), **parse_target(text)}


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
        InputField("target_irr", "寻优目标，例如“IRR 达到 8%”或“6 年回本”"),
        InputField("solve_for", "要反推的参数：造价、电价或装机容量", required=False),
    ),
    parse_answer=parse_answer,
    produces=(REVERSE,),
    consumes=(CASE,),
    claims=asks_to_solve,
    tools=("pv_economics", "pv_reverse"),
    internal_plan="reverse_opt.dot",
)
