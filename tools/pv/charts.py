"""PNG charts for PV results (matplotlib, Agg canvas, no pyplot global state).

Labels are Chinese when a CJK font is installed; otherwise English, because matplotlib's
bundled fonts have no CJK glyphs and would draw empty boxes.

Charts were the largest cost of an S1 turn in the server profile (docs/benchmarks.md,
http-throughput): the same case is drawn once per process (PNG bytes kept by the chart's data,
an LRU of 64), and fixed margins replace `tight_layout`, which drew every figure twice.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["cashflow_chart", "cjk_font", "tornado_chart"]

_CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "SimHei",
    "Microsoft YaHei",
    "PingFang SC",
    "Heiti SC",
)


@cache
def cjk_font() -> str | None:
    """An installed font family that can draw Chinese, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in _CJK_FONTS if name in installed), None)


def _label(zh: str, en: str) -> str:
    return zh if cjk_font() else en


def _figure(width: float, height: float, left: float) -> tuple[Figure, Any]:
    # Imported here so loading the agent registry does not load matplotlib.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=left, right=0.97, top=0.92, bottom=0.12)
    return fig, fig.add_subplot()


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


@lru_cache(maxsize=64)
def _rendered(kind: str, data: str) -> bytes:
    """PNG bytes of one chart, by its kind and its data as canonical JSON (drawn once per process)."""
    return _DRAW[kind](json.loads(data))


def _write(kind: str, data: dict[str, Any], path: Path) -> Path:
    key = json.dumps({**data, "font": cjk_font()}, sort_keys=True, ensure_ascii=False, default=str)
    path.write_bytes(_rendered(kind, key))
    return path


def tornado_chart(rows: list[dict[str, Any]], base_npv: float, path: Path) -> Path:
    """Horizontal bars of NPV at −20 % and +20 % of each variable around the base NPV."""
    return _write("tornado", {"rows": rows, "base_npv": base_npv}, path)


def cashflow_chart(cashflow: list[dict[str, Any]], path: Path) -> Path:
    """Yearly net cash flow (bars) and cumulative cash flow (line), in 万元."""
    return _write("cashflow", {"cashflow": cashflow}, path)


def _draw_tornado(data: dict[str, Any]) -> bytes:
    rows, base_npv = data["rows"], data["base_npv"]
    font = cjk_font()
    fig, ax = _figure(8, 4.5, left=0.2)
    spans = sorted(rows, key=lambda r: abs(r["npv_high"] - r["npv_low"]))
    labels = [r["label"] if font else r["label_en"] for r in spans]
    for i, r in enumerate(spans):
        for value, color in ((r["npv_low"], "#d9534f"), (r["npv_high"], "#5cb85c")):
            ax.barh(i, (value - base_npv) / 1e4, left=base_npv / 1e4, color=color, height=0.6)
    ax.set_yticks(range(len(spans)), labels, family=font or "DejaVu Sans")
    ax.axvline(base_npv / 1e4, color="black", linewidth=1)
    ax.set_xlabel(
        _label("净现值 NPV（万元）；红：−20%，绿：+20%", "NPV (10k CNY); red: -20 %, green: +20 %"),
        family=font or "DejaVu Sans",
    )
    ax.set_title(
        _label("敏感性分析（龙卷风图）", "Sensitivity of NPV (tornado)"), family=font or "DejaVu Sans"
    )
    return _png(fig)


def _draw_cashflow(data: dict[str, Any]) -> bytes:
    cashflow = data["cashflow"]
    font = cjk_font()
    fig, ax = _figure(8, 4.5, left=0.1)
    years = [row["year"] for row in cashflow]
    ax.bar(
        years,
        [row["net_cash_flow"] / 1e4 for row in cashflow],
        color="#5b9bd5",
        label=_label("年净现金流", "Net cash flow"),
    )
    ax.plot(
        years,
        [row["cumulative"] / 1e4 for row in cashflow],
        color="#ed7d31",
        marker="o",
        markersize=3,
        label=_label("累计现金流", "Cumulative"),
    )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel(_label("年", "Year"), family=font or "DejaVu Sans")
    ax.set_ylabel(_label("万元", "10k CNY"), family=font or "DejaVu Sans")
    ax.set_title(_label("项目现金流", "Project cash flow"), family=font or "DejaVu Sans")
    ax.legend(prop={"family": font or "DejaVu Sans"})
    return _png(fig)


_DRAW: dict[str, Callable[[dict[str, Any]], bytes]] = {"tornado": _draw_tornado, "cashflow": _draw_cashflow}
