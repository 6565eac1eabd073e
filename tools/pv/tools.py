"""The PV library as model-facing tools: `pv_calculate`, `pv_sensitivity`, `pv_reverse`.

Their docstrings and argument schemas are what the model reads. The store of results is bound by
the caller (`CaseStore`): a calculation is saved once as a `pv_case` (the same payload and
headline the pv_calc agent writes), and the other two tools start from a saved case, the given
`case_id` or the conversation's latest one. A mistake the model can fix (a missing input, an
unknown place, no case to start from) comes back as a tool error that says what is valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from tools.pv.data import find_locations, using_tables
from tools.pv.economics import simulate
from tools.pv.model_fields import PvInputs
from tools.pv.resolve import resolve_inputs
from tools.pv.reverse import BOUNDS, solve
from tools.pv.sensitivity import sensitivity_table, table_markdown

__all__ = ["CASE_KIND", "CaseStore", "case_headline", "make_pv_tools"]

CASE_KIND = "pv_case"
_FIGURES = ("investment", "npv", "irr", "lcoe", "payback_static", "payback_discounted", "first_year_revenue")


@dataclass(frozen=True)
class CaseStore:
    """Where the PV tools keep and find results.

    `save(kind, payload, headline) -> store id`, `latest(kind) -> (store id, payload) | None`,
    `load(store id) -> payload`; `tables` is the PV tables folder (None: the shipped ones).
    `standing()` gives the user's own defaults (field → value, basis, fact id; see
    `resolve_inputs`) and `used(defaults_used)` is told which defaults a calculation took.
    """

    save: Callable[[str, dict[str, Any], dict[str, Any]], str]
    latest: Callable[[str], tuple[str, dict[str, Any]] | None]
    load: Callable[[str], dict[str, Any]]
    tables: str | None = None
    standing: Callable[[], Mapping[str, tuple[Any, str, str]]] | None = None
    used: Callable[[list[dict[str, Any]]], None] | None = None


def case_headline(case: dict[str, Any]) -> dict[str, Any]:
    """The headline of a PV case as the results index keeps it (inputs, defaulted fields, results)."""
    return {
        "inputs": {
            k: v for k, v in case["inputs"].items() if v is not None and k not in ("province", "city")
        },
        "defaulted": [d["field"] for d in case.get("defaults_used", [])],
        "results": {k: round(v, 6) if isinstance(v, float) else v for k, v in case["results"].items()},
    }


def _figures(case: dict[str, Any]) -> dict[str, Any]:
    return {k: case["results"].get(k) for k in _FIGURES}


def make_pv_tools(store: CaseStore) -> list[BaseTool]:
    """The three PV tools bound to `store`."""

    def base(case_id: str | None) -> tuple[str, dict[str, Any]]:
        if case_id:
            try:
                return case_id, store.load(case_id)
            except (KeyError, ValueError, LookupError) as err:
                raise ToolException(
                    f"找不到测算方案 {case_id}（{err}）。不传 case_id 使用本对话最近一次测算，或先调用 pv_calculate。"
                ) from None
        found = store.latest(CASE_KIND)
        if found is None:
            raise ToolException(
                "本对话还没有测算方案：请先调用 pv_calculate（需要地点、项目类型、装机容量）。"
            )
        return found

    def pv_calculate(**values: Any) -> str:
        """Calculate a PV project's economics (25-year cash flow, NPV, IRR, LCOE, payback).

        Required: location (a Chinese city or district, e.g. 杭州市余杭区), project_type (工商业 or 户用),
        and capacity_kw or roof_area_m2. Everything else falls back to documented defaults. Units:
        kW, yuan/W, yuan/kWh, fractions 0–1. Returns the headline figures and the case id (store://…)
        that pv_sensitivity and pv_reverse accept.
        """
        fields = {k: v for k, v in values.items() if v is not None}
        if "location" in fields:
            places = find_locations(str(fields["location"]))
            if places:
                fields["location"] = places[0][1].name
            else:
                fields["location_unknown"] = fields.pop("location")
        with using_tables(store.tables):
            resolution = resolve_inputs(fields, standing=store.standing() if store.standing else None)
            if resolution.inputs is None:
                raise ToolException(
                    f"{resolution.question}（缺少或有误的参数：{', '.join(resolution.missing)}）"
                )
            case = {
                "inputs": dict(resolution.inputs),
                "defaults_used": list(resolution.defaults_used),
                **simulate(resolution.inputs),
            }
        ref = store.save(CASE_KIND, case, case_headline(case))
        if store.used is not None:
            store.used(case["defaults_used"])
        defaulted = {
            d["field"]: d["text"] + (f"（{d['basis']}）" if d.get("fact_id") else "")
            for d in case["defaults_used"]
        }
        return json.dumps(
            {
                "case_id": ref,
                "location": case["inputs"]["location"],
                "results": _figures(case),
                "defaults": defaulted,
            },
            ensure_ascii=False,
            default=str,
        )

    def pv_sensitivity(case_id: str | None = None) -> str:
        """How IRR and NPV move when cost, price, yield, self-consumption and discount rate change ±10 %/±20 %.

        `case_id`: a case from pv_calculate (store://…); empty = the conversation's latest case.
        Returns a Markdown table.
        """
        ref, case = base(case_id)
        with using_tables(store.tables):
            table = sensitivity_table(case["inputs"])
        store.save(
            "sensitivity",
            {"base": ref, "inputs": case["inputs"], "table": table["rows"], "tornado": table["tornado"]},
            {"base": ref},
        )
        return f"基准方案 {ref}\n" + table_markdown(table, case["results"])

    def pv_reverse(
        target_kind: Literal["irr", "npv", "payback"],
        target: float,
        solve_for: Literal["capex_yuan_per_w", "electricity_price", "feed_in_price", "self_consumption"],
        case_id: str | None = None,
    ) -> str:
        """Solve for the value of one input that reaches a target (reverse optimisation).

        `target_kind`: irr (a fraction, 0.08 = 8 %), npv (yuan) or payback (years); `target`: its value;
        `solve_for`: which input to find — the highest capex_yuan_per_w, or the lowest electricity_price,
        feed_in_price or self_consumption that still meets the target. `case_id`: the case to start
        from (empty = the latest). Returns the boundary value, or the best reachable when infeasible.
        """
        ref, case = base(case_id)
        with using_tables(store.tables):
            answer = solve(dict(case["inputs"]), solve_for, target_kind, float(target), BOUNDS[solve_for])
        payload = {
            "base": ref,
            "variable": solve_for,
            "target": {"kind": target_kind, "value": target},
            **answer,
        }
        store.save("pv_reverse", {**payload, "inputs": case["inputs"]}, payload)
        return json.dumps(payload, ensure_ascii=False, default=str)

    calculate = StructuredTool.from_function(
        pv_calculate,
        name="pv_calculate",
        args_schema=PvInputs,
        handle_tool_error=True,
        description=pv_calculate.__doc__ or "",
    )
    return [
        calculate,
        StructuredTool.from_function(pv_sensitivity, handle_tool_error=True),
        StructuredTool.from_function(pv_reverse, handle_tool_error=True),
    ]
