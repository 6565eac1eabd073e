"""pv_calc — 光伏经济性测算: a workflow agent (parse → resolve → cash flow → metrics).

Internal plan: parse the user's words (`tools.pv.inputs`) → recall an earlier calculation when
the user refers to it → complete and validate inputs (`tools.pv.resolve`) → 25-year cash flow
and NPV / IRR / LCOE / payback (`tools.pv.economics`).

Recall: when the text refers to the earlier calculation ("其他参数不变", "沿用", "重新测算"…),
the non-default inputs of the conversation's latest case (results index) are reused and
the new values replace them; defaults that depend on the place (yield, feed-in price) are looked
up again. Without such a phrase nothing is reused silently: missing inputs are asked for, and
the question says that replying "沿用上次参数" reuses the earlier ones.
"""

from __future__ import annotations

from typing import Any

from nodes.agents._pv import (
    CASE,
    PV_INPUTS,
    gather_fields,
    latest_case,
    make_case,
    previous_given,
    pv_agent,
    recall,
    save_case,
)
from nodes.kit.registry import AgentSpec, InputField
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.pv.inputs import merge_fields, parse_fields
from tools.pv.resolve import LABELS, fmt, resolve_inputs
from tools.pv.text import conclusion_line, defaults_lines, result_lines

__all__ = ["AGENT", "run"]


def run(ctx: StepContext) -> AgentExecResult:
    """Calculate the PV project's economics, or ask for what is missing or wrong."""
    ctx.emit("正在解析测算参数…")
    stated = gather_fields(ctx)
    previous = latest_case(ctx)
    fields, reused = dict(stated), {}
    if stated.get("reuse_previous") and previous is not None:
        reused = {k: v for k, v in previous_given(previous).items() if k not in stated}
        fields = merge_fields(previous_given(previous), stated)
    resolution = resolve_inputs(fields)
    if resolution.inputs is None:
        question = resolution.question
        if stated.get("reuse_previous") and previous is None:
            question = "没有找到之前的测算记录。" + question
        elif previous is not None and not stated.get("reuse_previous"):
            question += "如果沿用上次测算的参数，回复“沿用上次参数”即可。"
        return ctx.interrupted(question, resolution.missing)
    inputs = resolution.inputs
    ctx.emit(f"已确定测算地点：{inputs['location']}，年等效利用小时数 {inputs['specific_yield']:g} kWh/kWp")
    ctx.emit(f"正在计算{inputs['lifetime_years']}年现金流…")
    case = make_case(inputs, resolution.defaults_used)
    ctx.emit("正在计算 NPV、IRR、LCOE 和回收期…")
    output = _summary(case, reused, previous if previous and reused else {})
    context = save_case(ctx, case)
    ctx.record_tool_call("pv_economics", inputs, output, context)
    return ctx.result("completed", output, context)


def _summary(case: dict[str, Any], reused: dict[str, Any], before: dict[str, Any]) -> str:
    v = case["inputs"]
    lines = [
        f"光伏经济性测算结果（{v['location']} · {v['project_type']} · {fmt('capacity_kw', v['capacity_kw'])}）",
        conclusion_line(case),
        *result_lines(case),
    ]
    kept = [
        f"{LABELS[k][0]} {fmt(k, reused[k])}"
        for k in reused
        if k in case["inputs"] and case["inputs"][k] == reused[k]
    ]
    if kept:
        lines.append("沿用上次测算的参数：" + "、".join(kept) + "；未提供的参数仍按默认值。")
        old = before.get("inputs", {})
        moved = [LABELS[k][0] for k in ("specific_yield", "feed_in_price") if k in old and old[k] != v[k]]
        if moved:
            lines.append(f"随地点更新：{'、'.join(moved)}（按{v['location']}取值）。")
    if case["defaults_used"]:
        lines += ["以下参数您未提供，采用默认值：", *defaults_lines(case)]
    lines.append("说明：按全部自有资金、税前、不含残值测算，电价与运维成本在运营期内不变。")
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
        InputField("capex_yuan_per_w", "单瓦造价（元/W）", required=False),
        InputField("electricity_price", "自用部分的电价（元/kWh）", required=False),
        InputField("self_consumption", "自发自用比例", required=False),
    ),
    parse_answer=parse_answer,
    produces=(CASE,),
    recall=recall,
    tools=("pv_inputs", "pv_resolve", "pv_economics"),
    internal_plan="pv_calc.dot",
)
