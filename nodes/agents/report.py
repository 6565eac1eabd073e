"""report — 测算报告生成: Markdown + HTML report of a PV calculation, written to the data dir.

Internal plan: find the base case (dependency, else pv_calc's memory, else the values stated
here) → find a matching sensitivity analysis (dependency, else the sensitivity agent's memory
when its base inputs equal this case's) → cash-flow chart → Markdown and HTML files named after
the plan (a re-run overwrites them) → the Markdown offloaded as `store://…` for other agents.
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
from nodes.agents.sensitivity import SENSITIVITY
from nodes.kit.registry import AgentSpec
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.lang import pick
from tools.pv.charts import cashflow_chart
from tools.pv.inputs import parse_fields
from tools.pv.report import report_sections, to_html, to_markdown
from tools.pv.resolve import Resolution

__all__ = ["AGENT", "REPORT", "run"]

REPORT = "report"  # results-index kind of a report (its Markdown text)


def _sensitivity(ctx: StepContext, case: dict[str, Any]) -> dict[str, Any] | None:
    """A sensitivity table of this very case: a dependency's, else the conversation's latest."""
    inputs = headline_inputs(case["inputs"])
    for seq in sorted(ctx.deps, reverse=True):
        context = ctx.deps[seq].get("context") or {}
        if isinstance(context.get("sensitivity"), str) and context.get("inputs") == inputs:
            return ctx.load_result(context["sensitivity"])
    found = ctx.latest_result(SENSITIVITY, lambda r: r.headline.get("inputs") == inputs)
    return None if found is None else found[1]


def run(ctx: StepContext) -> AgentExecResult:
    """Write the report files, or ask for the calculation they should describe."""
    lang = ctx.language
    ctx.emit(pick(lang, "正在汇总测算结果…", "Collecting the calculation results…"))
    case = base_case(ctx, pick(lang, "生成测算报告", "write the report"))
    if isinstance(case, Resolution):
        return ctx.interrupted(case.question, case.missing)
    sensitivity = _sensitivity(ctx, case)
    ctx.emit(pick(lang, "正在绘制现金流图…", "Drawing the cash flow chart…"))
    chart = cashflow_chart(case["cashflow"], artifact_path(ctx, "cashflow", "png"))
    ctx.emit(pick(lang, "正在生成 Markdown 和 HTML 报告…", "Writing the Markdown and HTML report…"))
    sections = report_sections(case, chart, sensitivity, lang)
    markdown = to_markdown(case, sections, lang)
    md_path, html_path = artifact_path(ctx, "report", "md"), artifact_path(ctx, "report", "html")
    md_path.write_text(markdown, encoding="utf-8")
    html_path.write_text(to_html(case, sections, lang), encoding="utf-8")
    base = save_case(ctx, case)["case"]
    # State, stream and summary name files relative to the data dir (output text: by file name).
    report_path = artifact_name(ctx, md_path)
    headline = {"inputs": headline_inputs(case["inputs"]), "base": base, "report_path": report_path}
    data_id = ctx.save_result(REPORT, {"markdown": markdown, **headline}, headline)
    artifacts = [artifact_name(ctx, p) for p in (md_path, html_path, chart)]
    if lang == "en":
        where = f" (content id {data_id})" if data_id else ""
        extra = ", with the sensitivity analysis" if sensitivity else ""
        output = f"Report written{extra}:\nMarkdown: {md_path.name}\nHTML: {html_path.name}{where}"
    else:
        where = f"（内容编号 {data_id}）" if data_id else ""
        extra = "，含敏感性分析" if sensitivity else ""
        output = f"测算报告已生成{extra}：\nMarkdown：{md_path.name}\nHTML：{html_path.name}{where}"
    context = {
        "report_path": report_path,
        "data_id": data_id,
        "artifacts": artifacts,
        "inputs": headline_inputs(case["inputs"]),
        "base": base,
        "with_sensitivity": bool(sensitivity),
    }
    ctx.record_tool_call("pv_report", {"inputs": case["inputs"]}, output, context)
    return ctx.result("completed", output, context)


AGENT = AgentSpec(
    name="report",
    description="测算报告生成 report：把光伏经济性测算（和敏感性分析）的输入、假设、结果、逐年现金流表和图表"
    "生成Markdown和HTML报告文件。",
    run=pv_agent(run),
    examples=(
        "生成测算报告",
        "帮我生成一份光伏经济测算报告",
        "把测算结果整理成报告文件",
        "导出光伏项目的可研测算报告（HTML）",
        "出个报告",
        "写成报告给领导看",
        "a report file of the results",
        "export an HTML report of the case",
        # other words for the same work: a document to hand on to someone
        "a write-up or memo of the results I can send to my boss or the board",
        "put it all in a document for the management",
        "整理成一份汇报材料发给老板",
    ),
    inputs=PV_INPUTS,
    answer_fields=PV_ANSWER_FIELDS,
    parse_answer=parse_fields,
    produces=(REPORT,),
    consumes=(CASE, SENSITIVITY),
    tools=("pv_economics", "pv_charts", "pv_report"),
    internal_plan="report.dot",
)
