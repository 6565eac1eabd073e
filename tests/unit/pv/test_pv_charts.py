"""Charts: a PNG per call, the same case drawn once per process, another case drawn anew."""

from __future__ import annotations

from tools.pv import charts

ROWS = [
    {"variable": v, "label": zh, "label_en": v, "npv_low": 1.0e6 - 1e5 * i, "npv_high": 1.0e6 + 1.2e5 * i}
    for i, (v, zh) in enumerate([("price", "自用电价"), ("capex", "单瓦造价"), ("hours", "年等效利用小时数")])
]
CASHFLOW = [{"year": y, "net_cash_flow": 1e5 * (y - 3), "cumulative": 5e4 * y * (y - 6)} for y in range(26)]
PNG = b"\x89PNG\r\n\x1a\n"


def test_same_case_is_drawn_once_and_written_to_each_path(tmp_path):
    charts._rendered.cache_clear()
    first = charts.tornado_chart(ROWS, 1.0e6, tmp_path / "a.png")
    second = charts.tornado_chart([dict(r) for r in ROWS], 1.0e6, tmp_path / "b.png")
    assert first.read_bytes().startswith(PNG)
    assert second.read_bytes() == first.read_bytes()
    info = charts._rendered.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_another_case_or_chart_is_drawn_anew(tmp_path):
    charts._rendered.cache_clear()
    base = charts.tornado_chart(ROWS, 1.0e6, tmp_path / "base.png").read_bytes()
    moved = [{**r, "npv_high": r["npv_high"] * 1.5} for r in ROWS]
    other = charts.tornado_chart(moved, 1.0e6, tmp_path / "other.png").read_bytes()
    flow = charts.cashflow_chart(CASHFLOW, tmp_path / "flow.png").read_bytes()
    assert other != base and flow.startswith(PNG) and flow not in (base, other)
    assert charts._rendered.cache_info().misses == 3
