"""Where a PV agent finds its calculation: the user's words, a dependency result, or memory.

A *case* is the pv_calc context: `{"inputs", "defaults_used", "results", "cashflow"}`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nodes.step import last_tool_call
from tools.pv_economics import simulate
from tools.pv_inputs import merge_fields, parse_fields
from tools.pv_model_fields import fill_with_model
from tools.pv_resolve import MODEL_FIELDS, Resolution, resolve_inputs

if TYPE_CHECKING:
    from nodes.step import StepContext

__all__ = ["FIELD_KEYS", "artifact_path", "base_case", "gather_fields", "make_case", "previous_given"]

FIELD_KEYS = frozenset(MODEL_FIELDS) | {
    "location_unknown",
    "capacity_unitless",
    "capex_total_yuan",
    "capex_unitless",
    "om_total_yuan_per_year",
    "reuse_previous",
}


def gather_fields(ctx: StepContext, strip: Callable[[str], str] = lambda text: text) -> dict[str, Any]:
    """Fields the user stated for this step: plan context first, then request, requirement, answers.

    With a chat model, the model may fill what the parser could not read (`tools.pv_model_fields`).
    """
    fields = {k: v for k, v in ctx.plan_context.items() if k in FIELD_KEYS}
    texts = [strip(text) for text in ctx.texts()]
    for text in texts:
        fields = merge_fields(fields, parse_fields(text))
    if ctx.model is not None:
        fields = fill_with_model(ctx.model, texts, fields, ctx.emit)
    return fields


def make_case(inputs: dict[str, Any], defaults_used: list[dict[str, Any]]) -> dict[str, Any]:
    """Run the model on resolved `inputs`; the result is the pv_calc context."""
    return {"inputs": dict(inputs), "defaults_used": list(defaults_used), **simulate(inputs)}


def previous_given(case: dict[str, Any]) -> dict[str, Any]:
    """The inputs of an earlier case that were not defaults (so defaults follow a new location)."""
    defaulted = {d["field"] for d in case.get("defaults_used", [])}
    return {
        k: v
        for k, v in case.get("inputs", {}).items()
        if k in MODEL_FIELDS and k not in defaulted and v is not None
    }


def _from_deps(ctx: StepContext) -> dict[str, Any] | None:
    for seq in sorted(ctx.deps, reverse=True):
        context = ctx.deps[seq].get("context") or {}
        for candidate in (context, context.get("base")):
            if isinstance(candidate, dict) and "inputs" in candidate and "results" in candidate:
                return make_case(candidate["inputs"], candidate.get("defaults_used", []))
    return None


def base_case(
    ctx: StepContext, purpose: str, strip: Callable[[str], str] = lambda text: text
) -> dict[str, Any] | Resolution:
    """The calculation this step works on, or the Resolution holding the question to ask.

    Order: a dependency's result; else the newest pv_economics call in pv_calc's memory, updated
    with any values stated for this step; else a calculation from the values stated here.
    """
    if (case := _from_deps(ctx)) is not None:
        return case
    fields = {k: v for k, v in gather_fields(ctx, strip).items() if k != "reuse_previous"}
    memory = ctx.memory if ctx.agent_name == "pv_calc" else ctx.other_memory("pv_calc")
    previous = last_tool_call(memory, "pv_economics")
    if previous is not None and previous[1].get("inputs"):
        if not fields:
            return make_case(previous[1]["inputs"], previous[1].get("defaults_used", []))
        fields = merge_fields(previous_given(previous[1]), fields)
    resolution = resolve_inputs(fields, purpose)
    if resolution.inputs is None:
        if previous is None:
            resolution.question = "没有找到已有的测算方案。" + resolution.question
        return resolution
    return make_case(resolution.inputs, resolution.defaults_used)


def artifact_path(ctx: StepContext, kind: str, suffix: str) -> Path:
    """`data_dir/artifacts/<user>/<conversation>/<plan>_<kind>.<suffix>` (same name on re-run)."""
    folder = Path(ctx.data_dir) / "artifacts" / _safe(ctx.user_id) / _safe(ctx.conversation_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{_safe(ctx.plan_id)}_{kind}.{suffix}"


def _safe(name: str) -> str:
    """One path component per id; different ids give different names.

    Word characters and `-` stay, every other character (and a leading dot) becomes %XX of its UTF-8 bytes, so `..`, `/` or
    `a/b` vs `a_b` can neither leave the artifact folder nor share a folder.
    """
    encoded = re.sub(r"[^\w.-]", lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), name)
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    return encoded or "%"
