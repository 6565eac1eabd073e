"""pv_calc — 光伏经济性测算: a workflow agent (parse → resolve → cash flow → metrics).

Internal plan: parse the user's words (`tools.pv.inputs`) → carry the conversation's latest
case when this request is a follow-up → complete and validate inputs (`tools.pv.resolve`) →
25-year cash flow and NPV / IRR / LCOE / payback (`tools.pv.economics`).

Follow-ups: when the request does not describe a whole new project (location, type and size)
or refers to the earlier calculation ("其他参数不变", "沿用"), the values the user gave for the
conversation's latest case (results index) are carried and the new values replace them
("造价降到2.6呢", "what if it were 1.5 MW?"); defaults that depend on the place (yield, feed-in
price) are looked up again. The answer lists every carried value, so nothing is reused
silently. Text follows the language of the request (Chinese or English).
"""

from __future__ import annotations

from typing import Any

from nodes.agents._pv import (
    CASE,
    PV_ANSWER_FIELDS,
    PV_DEFAULTS,
    PV_INPUTS,
    gather_fields,
    latest_case,
    make_case,
    previous_given,
    pv_agent,
    recall,
    resolve,
    save_case,
    show_value,
)
from nodes.kit.registry import AgentSpec, InputField
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.lang import pick
from tools.pv.inputs import apply_changes, merge_fields, parse_fields
from tools.pv.resolve import MODEL_FIELDS, fmt, implausible, label
from tools.pv.text import conclusion_line, defaults_lines, result_lines

__all__ = ["AGENT", "run"]


_PLACE = ("location", "location_unknown", "specific_yield")
_SIZE = ("capacity_kw", "capacity_unitless", "roof_area_m2")


def _new_project(stated: dict[str, Any]) -> bool:
    """True when the words describe a whole project: place, type and size."""
    return any(k in stated for k in _PLACE) and "project_type" in stated and any(k in stated for k in _SIZE)


def _same_unit(stated: dict[str, Any]) -> dict[str, Any]:
    """A follow-up's bare cost ("造价降到2.6呢") in the unit of the value it replaces (元/W).

    Only a plausible per-watt figure (1–8) is read so; anything else stays unitless and is asked.
    """
    value = stated.get("capex_unitless")
    if value is None or not 1 <= value <= 8:
        return stated
    return {**{k: v for k, v in stated.items() if k != "capex_unitless"}, "capex_yuan_per_w": value}


def run(ctx: StepContext) -> AgentExecResult:
    """Calculate the PV project's economics, or ask for what is missing or wrong."""
    lang = ctx.language
    ctx.emit(pick(lang, "正在解析测算参数…", "Reading the calculation inputs…"))
    stated = gather_fields(ctx)
    previous = latest_case(ctx)
    relative = bool(stated.get("changes"))
    fields = {k: v for k, v in stated.items() if k != "changes"}
    reused: dict[str, Any] = {}
    changed: dict[str, tuple] = {}
    follow_up = stated.get("reuse_previous") or relative or not _new_project(stated)
    if follow_up and previous is not None:
        # "造价再便宜0.4元/W": a change by an amount applies to the value the latest case used
        stated, changed = apply_changes(_same_unit(stated), previous.get("inputs", {}))
        reused = {k: v for k, v in previous_given(previous).items() if k not in stated}
        fields = merge_fields(previous_given(previous), stated)
    resolution = resolve(ctx, fields, lang=lang)
    if resolution.inputs is None:
        question = resolution.question
        if (stated.get("reuse_previous") or relative) and previous is None:
            question = pick(lang, "没有找到之前的测算记录。", "I found no earlier calculation. ") + question
        elif reused:
            carried = "、".join(f"{label(k, lang)} {fmt(k, v, lang)}" for k, v in reused.items())
            question = (
                pick(
                    lang,
                    f"（沿用了上次测算的：{carried}）",
                    f"(Carried from the last calculation: {carried}.) ",
                )
                + question
            )
        return ctx.interrupted(question, resolution.missing)
    inputs = resolution.inputs
    ctx.emit(
        pick(
            lang,
            f"已确定测算地点：{inputs['location']}，年等效利用小时数 {inputs['specific_yield']:g} kWh/kWp",
            f"Location: {fmt('location', inputs['location'], lang)}, specific yield {inputs['specific_yield']:g} kWh/kWp",
        )
    )
    ctx.emit(
        pick(
            lang,
            f"正在计算{inputs['lifetime_years']}年现金流…",
            f"Computing the {inputs['lifetime_years']}-year cash flow…",
        )
    )
    case = make_case(inputs, resolution.defaults_used)
    ctx.emit(pick(lang, "正在计算 NPV、IRR、LCOE 和回收期…", "Computing NPV, IRR, LCOE and payback…"))
    moves: dict[str, tuple] = {}
    if previous is not None and (reused or changed):  # a follow-up: what it changed, first
        before = previous.get("inputs", {})
        moves = {
            k: (before.get(k), inputs[k])
            for k in MODEL_FIELDS
            if k in stated and k in inputs and before.get(k) != inputs[k]
        }
    output = _summary(case, reused, previous if previous and reused else {}, lang, moves)
    context = save_case(ctx, case)
    ctx.record_tool_call("pv_economics", inputs, output, context)
    return ctx.result("completed", output, context)


def _summary(
    case: dict[str, Any],
    reused: dict[str, Any],
    before: dict[str, Any],
    lang: str = "zh",
    moves: dict[str, tuple] | None = None,
) -> str:
    v = case["inputs"]
    where = " · ".join(fmt(k, v[k], lang) for k in ("location", "project_type", "capacity_kw"))
    lines = [pick(lang, f"光伏经济性测算结果（{where}）", f"PV economics ({where})")]
    if moves:  # second line, so the plan's brief of this step (and the final summary) shows it
        shown = pick(lang, "、", ", ").join(
            f"{label(k, lang)} {fmt(k, old, lang)} → {fmt(k, new, lang)}" for k, (old, new) in moves.items()
        )
        lines.append(
            pick(
                lang,
                f"本次调整：{shown}；其余沿用上次测算。",
                f"Changed: {shown}; the rest carried from the last calculation.",
            )
        )
    lines += [conclusion_line(case, lang), *result_lines(case, lang)]
    kept = [
        f"{label(k, lang)} {fmt(k, reused[k], lang)}"
        for k in reused
        if k in case["inputs"] and case["inputs"][k] == reused[k]
    ]
    if kept:
        lines.append(
            pick(
                lang,
                "沿用上次测算的参数：" + "、".join(kept) + "；未提供的参数仍按默认值。",
                "Carried from the last calculation: " + ", ".join(kept) + "; other values use the defaults.",
            )
        )
        old = before.get("inputs", {})
        moved = [label(k, lang) for k in ("specific_yield", "feed_in_price") if k in old and old[k] != v[k]]
        if moved:
            lines.append(
                pick(
                    lang,
                    f"随地点更新：{'、'.join(moved)}（按{v['location']}取值）。",
                    f"Updated for the new location: {', '.join(moved)}.",
                )
            )
    if case["defaults_used"]:
        lines += [
            pick(lang, "以下参数您未提供，采用默认值：", "Values you did not give (defaults used):"),
            *defaults_lines(case, lang),
        ]
    lines.append(
        pick(
            lang,
            "说明：按全部自有资金、税前、不含残值测算，电价与运维成本在运营期内不变。",
            "Basis: all equity, pre-tax, no residual value; prices and O&M cost flat over the lifetime.",
        )
    )
    return "\n".join(lines)


def parse_answer(text: str) -> dict[str, Any]:
    """Fields in a user's answer, e.g. "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"."""
    return parse_fields(text)


AGENT = AgentSpec(
    name="pv_calc",
    description="光伏经济性测算 PV economic calculation：按地点、项目类型（工商业/户用）、装机容量或屋顶面积、造价、电价、"
    "自发自用比例等，计算逐年发电量与现金流、净现值NPV、内部收益率IRR、度电成本LCOE、静态和动态投资回收期。",
    run=pv_agent(run),
    examples=(
        "帮我进行光伏测算",
        "帮我做一个光伏经济性测算",
        "杭州余杭区500kW工商业屋顶光伏的收益怎么样",
        "我家屋顶装10kW户用光伏多久能回本",
        "厂房屋顶面积3000平方米，电价0.85元/度，装光伏划算吗",
        "其他参数不变，将地址更换到上海市后重新进行测算",
        "算一下这个光伏项目的IRR和投资回收期",
        "测算收益",
        "calculate the economics of a rooftop solar project",
        "what IRR, NPV and payback will this PV system have",
        "estimate the return on a commercial solar installation",
    ),
    inputs=(
        *PV_INPUTS,
        InputField("capex_yuan_per_w", "单瓦造价（元/W）", required=False, kind="number"),
        InputField("electricity_price", "自用部分的电价（元/kWh）", required=False, kind="number"),
        InputField("self_consumption", "自发自用比例", required=False, kind="number"),
    ),
    answer_fields=PV_ANSWER_FIELDS,
    parse_answer=parse_answer,
    produces=(CASE,),
    recall=recall,
    tools=("pv_inputs", "pv_resolve", "pv_economics"),
    internal_plan="pv_calc.dot",
    defaults=PV_DEFAULTS,
    show=show_value,
    check=implausible,
)
