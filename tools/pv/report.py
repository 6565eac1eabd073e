"""The PV calculation report as Markdown and HTML, built from one list of sections.

Blocks: ("p", text) | ("list", [items]) | ("table", headers, rows) | ("img", path, alt).
Markdown links images by file name (they sit beside the report); HTML embeds them as data URIs
so the file can be mailed on its own.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from tools.lang import pick
from tools.pv.resolve import LABELS, fmt, label
from tools.pv.text import money, pct, years

__all__ = ["report_sections", "to_html", "to_markdown"]

Section = tuple[str, list[tuple[Any, ...]]]
_ASSUMPTIONS = (
    "全部自有资金、税前测算，不含贷款、所得税、补贴与残值；电价、上网电价与运维成本在运营期内保持不变。",
    "发电量按首年衰减后线性逐年衰减；自用电量按自用电价、其余按上网电价结算（给出年用电量时，自用电量不超过年用电量）。",
    "NPV、IRR 由 numpy-financial 计算；回收期在年内线性插值。",
)
_ASSUMPTIONS_EN = (
    "All equity, pre-tax; no loans, income tax, subsidies or residual value; electricity price, "
    "feed-in price and O&M cost flat over the lifetime.",
    "Generation degrades by the first-year rate, then linearly each year; self-used energy earns the "
    "electricity price, the rest the feed-in price (with an annual consumption given, self-use never exceeds it).",
    "NPV and IRR computed with numpy-financial; payback interpolated within the year.",
)
# Chinese heading → English heading, for the English report.
_EN = {
    "项目输入": "Inputs",
    "参数": "Input",
    "取值": "Value",
    "默认值与依据": "Defaults and their basis",
    "全部参数由您提供。": "You gave every input.",
    "测算结果": "Results",
    "指标": "Metric",
    "数值": "Value",
    "总投资": "Investment",
    "首年发电量": "First-year generation",
    "净现值 NPV": "NPV",
    "内部收益率 IRR": "IRR",
    "平准化度电成本 LCOE": "LCOE",
    "静态回收期": "Payback (static)",
    "动态回收期": "Payback (discounted)",
    "逐年现金流": "Cash flow by year",
    "现金流图": "Cash flow chart",
    "年份": "Year",
    "发电量（万kWh）": "Generation (kWh)",
    "收入": "Revenue",
    "运维成本": "O&M cost",
    "净现金流": "Net cash flow",
    "累计现金流": "Cumulative cash flow",
    "变量": "Variable",
    "变动": "Change",
    "敏感性分析龙卷风图": "Sensitivity tornado chart",
    "敏感性分析": "Sensitivity analysis",
    "测算说明": "Basis of the calculation",
}


def report_sections(
    case: dict[str, Any], cashflow_png: Path, sensitivity: dict[str, Any] | None, lang: str = "zh"
) -> list[Section]:
    """Sections of the report for `case` (a pv_calc context) and an optional sensitivity context."""
    v, r = case["inputs"], case["results"]
    en = lang == "en"
    shown = [k for k in LABELS if v.get(k) is not None]
    inputs = [[label(k, lang), fmt(k, v[k], lang)] for k in shown]
    generation = r["first_year_generation_kwh"]
    lcoe = "—" if r["lcoe"] is None else f"{r['lcoe']:.3f} " + pick(lang, "元/kWh", "yuan/kWh")
    results = [
        ["总投资", money(r["investment"], lang)],
        ["首年发电量", f"{generation:,.0f} kWh" if en else f"{generation / 1e4:,.2f} 万kWh"],
        ["净现值 NPV", money(r["npv"], lang)],
        ["内部收益率 IRR", pct(r["irr"], pick(lang, "不存在", "none"))],
        ["平准化度电成本 LCOE", lcoe],
        ["静态回收期", years(r["payback_static"], lang)],
        ["动态回收期", years(r["payback_discounted"], lang)],
    ]
    flows = [
        [
            str(row["year"]),
            f"{row['generation_kwh']:,.0f}" if en else f"{row['generation_kwh'] / 1e4:,.2f}",
            money(row["revenue"], lang),
            money(row["om_cost"], lang),
            money(row["net_cash_flow"], lang),
            money(row["cumulative"], lang),
        ]
        for row in case["cashflow"]
    ]
    sections: list[Section] = [
        ("项目输入", [("table", ["参数", "取值"], inputs)]),
        (
            "默认值与依据",
            [
                (
                    "list",
                    [
                        f"{d['label']}: {d['text']} ({d['basis']})"
                        if en
                        else f"{d['label']}：{d['text']}（{d['basis']}）"
                        for d in case.get("defaults_used", [])
                    ]
                    or ["全部参数由您提供。"],
                )
            ],
        ),
        ("测算结果", [("table", ["指标", "数值"], results)]),
        (
            "逐年现金流",
            [
                ("img", cashflow_png, "现金流图"),
                ("table", ["年份", "发电量（万kWh）", "收入", "运维成本", "净现金流", "累计现金流"], flows),
            ],
        ),
    ]
    if sensitivity:
        rows = [
            [
                label(s["variable"], lang) if en else s["label"],
                f"{s['change'] * 100:+.0f}%",
                fmt(s["variable"], s["value"], lang),
                pct(s["irr"]),
                money(s["npv"], lang),
            ]
            for s in sensitivity["table"]
        ]
        blocks: list[tuple[Any, ...]] = [("table", ["变量", "变动", "取值", "IRR", "NPV"], rows)]
        if sensitivity.get("chart") and Path(sensitivity["chart"]).is_file():
            blocks.insert(0, ("img", Path(sensitivity["chart"]), "敏感性分析龙卷风图"))
        sections.append(("敏感性分析", blocks))
    sections.append(("测算说明", [("list", list(_ASSUMPTIONS_EN if en else _ASSUMPTIONS))]))
    return [_english(section) for section in sections] if en else sections


def _english(section: Section) -> Section:
    """A section with its fixed Chinese words (headings, table heads, row names) in English."""
    title, blocks = section

    def tr(text: Any) -> Any:
        return _EN.get(text, text) if isinstance(text, str) else text

    out: list[tuple[Any, ...]] = []
    for block in blocks:
        if block[0] == "table":
            out.append(("table", [tr(h) for h in block[1]], [[tr(c) for c in row] for row in block[2]]))
        elif block[0] == "list":
            out.append(("list", [tr(item) for item in block[1]]))
        elif block[0] == "img":
            out.append(("img", block[1], tr(block[2])))
        else:
            out.append(block)
    return tr(title), out


def _title(case: dict[str, Any], lang: str = "zh") -> str:
    v = case["inputs"]
    where = " · ".join(fmt(k, v[k], lang) for k in ("location", "project_type", "capacity_kw"))
    return pick(lang, f"光伏经济性测算报告：{where}", f"PV economics report: {where}")


def to_markdown(case: dict[str, Any], sections: list[Section], lang: str = "zh") -> str:
    """The report as Markdown."""
    out = [f"# {_title(case, lang)}", ""]
    for title, blocks in sections:
        out += [f"## {title}", ""]
        for block in blocks:
            if block[0] == "p":
                out.append(block[1])
            elif block[0] == "list":
                out += [f"- {item}" for item in block[1]]
            elif block[0] == "img":
                out.append(f"![{block[2]}]({block[1].name})")
            else:
                out += ["| " + " | ".join(block[1]) + " |", "|" + "---|" * len(block[1])]
                out += ["| " + " | ".join(row) + " |" for row in block[2]]
            out.append("")
    return "\n".join(out)


def to_html(case: dict[str, Any], sections: list[Section], lang: str = "zh") -> str:
    """The report as a standalone HTML page (images embedded)."""
    esc = html.escape
    out = [
        f'<!DOCTYPE html><html lang="{pick(lang, "zh-CN", "en")}"><head><meta charset="utf-8">',
        f"<title>{esc(_title(case, lang))}</title>",
        "<style>body{font-family:sans-serif;max-width:960px;margin:auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}img{max-width:100%}</style></head><body>",
        f"<h1>{esc(_title(case, lang))}</h1>",
    ]
    for title, blocks in sections:
        out.append(f"<h2>{esc(title)}</h2>")
        for block in blocks:
            if block[0] == "p":
                out.append(f"<p>{esc(block[1])}</p>")
            elif block[0] == "list":
                out.append("<ul>" + "".join(f"<li>{esc(item)}</li>" for item in block[1]) + "</ul>")
            elif block[0] == "img":
                data = base64.b64encode(block[1].read_bytes()).decode("ascii")
                out.append(f'<img alt="{esc(block[2])}" src="data:image/png;base64,{data}">')
            else:
                head = "".join(f"<th>{esc(h)}</th>" for h in block[1])
                body = "".join(
                    "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in block[2]
                )
                out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    out.append("</body></html>")
    return "\n".join(out)
