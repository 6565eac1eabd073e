"""sensitivity — 敏感性分析: IRR/NPV table and tornado chart around an existing calculation.

Internal plan: find the base case (`nodes.agents._pv.base_case`: the dependency's pv_calc result,
else the conversation's latest case, else the values stated here) → vary
capex, electricity price, yield, self-consumption and discount rate by ±10 % / ±20 %
(`tools.pv.sensitivity`) → tornado PNG (`tools.pv.charts`). Without any base case it asks for
the calculation inputs.
"""

from __future__ import annotations

from typing import Any

from nodes.agents._pv import (
    CASE,
    PV_ANSWER_FIELDS,
    PV_INPUTS,
    artifact_name,
    artifact_path,
    base_case,
    headline_inputs,
    pv_agent,
    save_case,
)
from nodes.kit.registry import AgentSpec
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.lang import pick
from tools.pv.charts import tornado_chart
from tools.pv.inputs import parse_fields
from tools.pv.resolve import Resolution, fmt
from tools.pv.sensitivity import VARIABLES, sensitivity_table, table_markdown

__all__ = ["AGENT", "SENSITIVITY", "run"]

SENSITIVITY = "sensitivity"  # results-index kind of a sensitivity table


def run(ctx: StepContext) -> AgentExecResult:
    """Run the sensitivity analysis, or ask for the calculation it should start from."""
    lang = ctx.language
    ctx.emit(pick(lang, "正在查找已有的测算方案…", "Looking for the calculation to start from…"))
    case = base_case(ctx, pick(lang, "做敏感性分析", "run the sensitivity analysis"))
    if isinstance(case, Resolution):
        return ctx.interrupted(case.question, case.missing)
    inputs = case["inputs"]
    ctx.emit(pick(lang, "基准方案：", "Base case: ") + _where(inputs, lang))
    ctx.emit(
        pick(
            lang,
            "正在计算造价、电价、发电量、自发自用比例、折现率 ±10%/±20% 下的 IRR 和 NPV…",
            "Computing IRR and NPV with cost, price, yield, self-consumption and discount rate at ±10%/±20%…",
        )
    )
    table = sensitivity_table(inputs)
    ctx.emit(pick(lang, "正在绘制龙卷风图…", "Drawing the tornado chart…"))
    chart = tornado_chart(table["tornado"], case["results"]["npv"], artifact_path(ctx, "tornado", "png"))
    output = _summary(case, table, chart.name, lang)
    base = save_case(ctx, case)["case"]
    payload = {
        "base": base,
        "inputs": inputs,
        "table": table["rows"],
        "tornado": table["tornado"],
        "chart": str(chart),
    }
    headline = {"inputs": headline_inputs(inputs), "base": base}
    ref = ctx.save_result(SENSITIVITY, payload, headline)
    context: dict[str, Any] = {**headline, "sensitivity": ref, "artifacts": [artifact_name(ctx, chart)]}
    ctx.record_tool_call("pv_sensitivity", {"inputs": inputs}, output, context)
    return ctx.result("completed", output, context)


def _where(inputs: dict[str, Any], lang: str) -> str:
    return " · ".join(fmt(k, inputs[k], lang) for k in ("location", "project_type", "capacity_kw"))


def _summary(case: dict[str, Any], table: dict[str, Any], chart: str, lang: str = "zh") -> str:
    strongest = max(table["tornado"], key=lambda r: abs(r["npv_high"] - r["npv_low"]))
    spread = abs(strongest["npv_high"] - strongest["npv_low"])
    if lang == "en":
        name = {n: en for n, _, en in VARIABLES}[strongest["variable"]].lower()
        return "\n".join(
            [
                f"Sensitivity analysis (base case: {_where(case['inputs'], lang)})",
                f"The {name} moves NPV the most: {spread:,.0f} yuan between −20% and +20%.",
                f"Tornado chart: {chart}",
                table_markdown(table, case["results"], lang),
            ]
        )
    return "\n".join(
        [
            f"敏感性分析（基准：{_where(case['inputs'], lang)}）",
            f"对 NPV 影响最大的是{strongest['label']}：在 ±20% 范围内 NPV 相差 {spread / 1e4:,.2f} 万元。",
            f"龙卷风图：{chart}",
            table_markdown(table, case["results"]),
        ]
    )


AGENT = AgentSpec(
    name="sensitivity",
    description="敏感性分析 sensitivity analysis：在已有光伏测算方案基础上，分别将造价、电价、发电量（利用小时数）、"
    "自发自用比例、折现率变动±10%和±20%，给出IRR和NPV变化表和龙卷风图。",
    run=pv_agent(run),
    examples=(
        "对测算方案进行敏感性分析",
        "我已经有测算方案了，对已有的测算方案进行敏感性分析",
        "电价和造价变化对收益率影响有多大",
        "做一下光伏项目的敏感性分析，画龙卷风图",
        "如果发电量少10%，IRR会降到多少",
        "各个参数变动对收益的影响",
        "sensitivity analysis of the case: which input moves the NPV most",
        "tornado chart of price and cost changes",
        # other words for the same work: a stress test, what-if scenarios, how robust the returns are
        "stress-test the returns: how robust is the IRR when the tariff or capex moves",
        "what-if scenarios on the key inputs, upside and downside",
        "做个压力测试：电价、造价波动时收益稳不稳",
        "情景分析：电价和造价不同时收益的区间",
    ),
    inputs=PV_INPUTS,
    answer_fields=PV_ANSWER_FIELDS,
    parse_answer=parse_fields,
    produces=(SENSITIVITY,),
    consumes=(CASE,),
    tools=("pv_economics", "pv_sensitivity", "pv_charts"),
    internal_plan="sensitivity.dot",
)
