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

from tools.pv.resolve import LABELS, fmt
from tools.pv.text import money, pct, years

__all__ = ["report_sections", "to_html", "to_markdown"]

Section = tuple[str, list[tuple[Any, ...]]]
_ASSUMPTIONS = (
    "全部自有资金、税前测算，不含贷款、所得税、补贴与残值；电价、上网电价与运维成本在运营期内保持不变。",
    "发电量按首年衰减后线性逐年衰减；自用电量按自用电价、其余按上网电价结算（给出年用电量时，自用电量不超过年用电量）。",
    "NPV、IRR 由 numpy-financial 计算；回收期在年内线性插值。",
)


def report_sections(
    case: dict[str, Any], cashflow_png: Path, sensitivity: dict[str, Any] | None
) -> list[Section]:
    """Sections of the report for `case` (a pv_calc context) and an optional sensitivity context."""
    v, r = case["inputs"], case["results"]
    shown = [k for k in LABELS if v.get(k) is not None]
    inputs = [[LABELS[k][0], fmt(k, v[k])] for k in shown]
    results = [
        ["总投资", money(r["investment"])],
        ["首年发电量", f"{r['first_year_generation_kwh'] / 1e4:,.2f} 万kWh"],
        ["净现值 NPV", money(r["npv"])],
        ["内部收益率 IRR", pct(r["irr"])],
        ["平准化度电成本 LCOE", "—" if r["lcoe"] is None else f"{r['lcoe']:.3f} 元/kWh"],
        ["静态回收期", years(r["payback_static"])],
        ["动态回收期", years(r["payback_discounted"])],
    ]
    flows = [
        [
            str(row["year"]),
            f"{row['generation_kwh'] / 1e4:,.2f}",
            money(row["revenue"]),
            money(row["om_cost"]),
            money(row["net_cash_flow"]),
            money(row["cumulative"]),
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
                    [f"{d['label']}：{d['text']}（{d['basis']}）" for d in case.get("defaults_used", [])]
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
                s["label"],
                f"{s['change'] * 100:+.0f}%",
                fmt(s["variable"], s["value"]),
                pct(s["irr"]),
                money(s["npv"]),
            ]
            for s in sensitivity["table"]
        ]
        blocks: list[tuple[Any, ...]] = [("table", ["变量", "变动", "取值", "IRR", "NPV"], rows)]
        if sensitivity.get("chart") and Path(sensitivity["chart"]).is_file():
            blocks.insert(0, ("img", Path(sensitivity["chart"]), "敏感性分析龙卷风图"))
        sections.append(("敏感性分析", blocks))
    sections.append(("测算说明", [("list", list(_ASSUMPTIONS))]))
    return sections


def _title(case: dict[str, Any]) -> str:
    v = case["inputs"]
    return (
        f"光伏经济性测算报告：{v['location']} · {v['project_type']} · {fmt('capacity_kw', v['capacity_kw'])}"
    )


def to_markdown(case: dict[str, Any], sections: list[Section]) -> str:
    """The report as Markdown."""
    out = [f"# {_title(case)}", ""]
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


def to_html(case: dict[str, Any], sections: list[Section]) -> str:
    """The report as a standalone HTML page (images embedded)."""
    esc = html.escape
    out = [
        '<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">',
        f"<title>{esc(_title(case))}</title>",
        "<style>body{font-family:sans-serif;max-width:960px;margin:auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}img{max-width:100%}</style></head><body>",
        f"<h1>{esc(_title(case))}</h1>",
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
