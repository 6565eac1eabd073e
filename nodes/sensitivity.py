"""sensitivity — 敏感性分析: IRR/NPV table and tornado chart around an existing calculation.

Internal plan: find the base case (`tools.pv_case.base_case`: the dependency's pv_calc result,
else the newest pv_economics call in pv_calc's memory, else the values stated here) → vary
capex, electricity price, yield, self-consumption and discount rate by ±10 % / ±20 %
(`tools.pv_sensitivity`) → tornado PNG (`tools.pv_charts`). Without any base case it asks for
the calculation inputs.
"""

from __future__ import annotations

from typing import Any

from nodes.registry import AgentSpec, InputField
from nodes.step import StepContext
from tools.contracts import AgentExecResult
from tools.pv_case import artifact_path, base_case
from tools.pv_charts import tornado_chart
from tools.pv_inputs import parse_fields
from tools.pv_resolve import Resolution
from tools.pv_sensitivity import sensitivity_table, table_markdown

__all__ = ["AGENT", "run"]


def run(ctx: StepContext) -> AgentExecResult:
    """Run the sensitivity analysis, or ask for the calculation it should start from."""
    ctx.emit("正在查找已有的测算方案…")
    case = base_case(ctx, "做敏感性分析")
    if isinstance(case, Resolution):
        return ctx.interrupted(case.question, case.missing)
    inputs = case["inputs"]
    ctx.emit(f"基准方案：{inputs['location']} · {inputs['project_type']} · {inputs['capacity_kw']:g} kW")
    ctx.emit("正在计算造价、电价、发电量、自发自用比例、折现率 ±10%/±20% 下的 IRR 和 NPV…")
    table = sensitivity_table(inputs)
    ctx.emit("正在绘制龙卷风图…")
    chart = tornado_chart(table["tornado"], case["results"]["npv"], artifact_path(ctx, "tornado", "png"))
    output = _summary(case, table, str(chart))
    context: dict[str, Any] = {
        "base": case,
        "table": table["rows"],
        "tornado": table["tornado"],
        "chart": str(chart),
        "artifacts": [str(chart)],
    }
    ctx.record_tool_call("pv_sensitivity", {"inputs": inputs}, output, context)
    return ctx.result("completed", output, context)


def _summary(case: dict[str, Any], table: dict[str, Any], chart: str) -> str:
    strongest = max(table["tornado"], key=lambda r: abs(r["npv_high"] - r["npv_low"]))
    spread = abs(strongest["npv_high"] - strongest["npv_low"]) / 1e4
    return "\n".join(
        [
            f"敏感性分析（基准：{case['inputs']['location']} · {case['inputs']['project_type']} · {case['inputs']['capacity_kw']:g} kW）",
            table_markdown(table, case["results"]),
            f"对 NPV 影响最大的是{strongest['label']}：在 ±20% 范围内 NPV 相差 {spread:,.2f} 万元。",
            f"龙卷风图：{chart}",
        ]
    )


AGENT = AgentSpec(
    name="sensitivity",
    description="敏感性分析 sensitivity analysis：在已有光伏测算方案基础上，分别将造价、电价、发电量（利用小时数）、"
    "自发自用比例、折现率变动±10%和±20%，给出IRR和NPV变化表和龙卷风图。",
    run=run,
    examples=(
        "对测算方案进行敏感性分析",
        "我已经有测算方案了，对已有的测算方案进行敏感性分析",
        "电价和造价变化对收益率影响有多大",
        "做一下光伏项目的敏感性分析，画龙卷风图",
        "如果发电量少10%，IRR会降到多少",
    ),
    inputs=(
        InputField("location", "测算方案的项目地点是哪里？"),
        InputField("project_type", "是工商业项目还是户用项目？"),
        InputField("capacity_kw", "装机容量是多少？"),
    ),
    parse_answer=parse_fields,
    produces=("pv_sensitivity",),
    reuse_phrases=("已有敏感性分析", "已经做过敏感性分析"),
    tools=("pv_economics", "pv_sensitivity", "pv_charts"),
    internal_plan="sensitivity.dot",
)
