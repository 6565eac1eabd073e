"""What the PV agents share: their input fields, where a calculation comes from, and how it is kept.

A *case* is a pv_calc result: `{"inputs", "defaults_used", "results", "cashflow"}`. It is stored
once (`save_case`, results index kind `pv_case`); a step's context carries its `store://` id
under `case` with the inputs and headline results, and later steps load it by that id or find
the conversation's latest one (`base_case`).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nodes.kit.registry import InputField
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.lang import pick
from tools.pv.data import using_tables
from tools.pv.economics import simulate
from tools.pv.inputs import EXCLUSIVE_GROUPS, apply_changes, merge_fields, parse_fields
from tools.pv.model_fields import fill_with_model
from tools.pv.resolve import (
    DEFAULTED,
    LABELS,
    MODEL_FIELDS,
    Resolution,
    fmt,
    label,
    place_name,
    resolve_inputs,
    type_name,
)

__all__ = [
    "CASE",
    "FIELD_KEYS",
    "PV_DEFAULTS",
    "PV_ANSWER_FIELDS",
    "PV_INPUTS",
    "artifact_name",
    "artifact_path",
    "base_case",
    "gather_fields",
    "headline_inputs",
    "latest_case",
    "make_case",
    "note_standing",
    "previous_given",
    "pv_agent",
    "recall",
    "resolve",
    "save_case",
    "show_value",
    "standing_values",
]

CASE = "pv_case"  # results-index kind of a pv_calc result
_MAX_COMPONENT = 150  # bytes of one artifact folder name; longer ids are cut and keep a hash

# The inputs every PV agent needs (what the planner reads in list_agents).
PV_INPUTS: tuple[InputField, ...] = (
    InputField("location", "项目所在的城市或区县（如“杭州余杭区”）"),
    InputField("project_type", "项目类型：工商业或户用", choices=("工商业", "户用")),
    InputField("capacity_kw", "装机容量（如“500kW”），或屋顶面积", kind="number"),
)
# Every other calculation input a structured answer may set, in canonical units (`tools.pv.resolve`).
PV_ANSWER_FIELDS: tuple[InputField, ...] = tuple(
    InputField(
        name,
        f"{LABELS[name][0]}（{'0–1 小数' if LABELS[name][1] == '%' else LABELS[name][1]}）",
        False,
        "number",
    )
    for name in MODEL_FIELDS
    if name not in {f.name for f in PV_INPUTS}
)


# Inputs with a documented default: a user's standing value ("我们的电价是0.72") may replace it.
PV_DEFAULTS: tuple[str, ...] = (*DEFAULTED, "feed_in_price")


def show_value(name: str, value: Any, lang: str) -> str:
    """A field's value for people: "自用电价 0.72 元/kWh" ("Discount rate 8%" in English)."""
    return f"{label(name, lang)} {fmt(name, value, lang)}"


def standing_values(ctx: StepContext, lang: str = "zh") -> dict[str, tuple[Any, str, str]]:
    """The user's standing values for PV defaults: field → (value, basis naming its source, fact id)."""
    standing = {}
    for key in PV_DEFAULTS:
        fact = ctx.fact(key)
        if fact is not None and isinstance(fact.value, int | float) and not isinstance(fact.value, bool):
            basis = pick(
                lang,
                f"您的长期设置，{fact.when} 在会话 {fact.conversation_id} 中说“{fact.said}”；"
                f"删除：plangraph memory forget {fact.fact_id}",
                f"your standing value, said in conversation {fact.conversation_id} on {fact.when}: "
                f"“{fact.said}”; remove with plangraph memory forget {fact.fact_id}",
            )
            standing[key] = (fact.value, basis, fact.fact_id)
    return standing


def note_standing(ctx: StepContext, defaults_used: list[dict[str, Any]]) -> None:
    """Record the standing values a resolution used (they are named among its defaults with their basis)."""
    by_id = {f.fact_id: f for f in ctx.facts}
    for used in defaults_used:
        if used.get("fact_id") in by_id:
            ctx.use_fact(by_id[used["fact_id"]], say=False)


def resolve(ctx: StepContext, fields: dict[str, Any], purpose: str = "", lang: str = "zh") -> Resolution:
    """`resolve_inputs` with the user's standing values in place of the defaults (each noted in the result)."""
    resolution = resolve_inputs(fields, purpose, lang, standing_values(ctx, lang))
    note_standing(ctx, resolution.defaults_used)
    return resolution


def pv_agent(run: Callable[[StepContext], AgentExecResult]) -> Callable[[StepContext], AgentExecResult]:
    """`run` reading the PV tables of the run's settings (`Context.pv_data`, else the shipped ones)."""

    @functools.wraps(run)
    def with_tables(ctx: StepContext) -> AgentExecResult:
        with using_tables(ctx.settings.pv_data or None):
            return run(ctx)

    return with_tables


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

    With a chat model, the model may fill what the parser could not read (`tools.pv.model_fields`).
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


def headline_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs a step's context shows: every stated or defaulted value, none of the empty ones."""
    return {k: v for k, v in inputs.items() if v is not None and k not in ("province", "city")}


# The figures of a case a user asks about afterwards, and the words that name them (zh / en).
_METRICS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("irr", "内部收益率 IRR", "IRR", ("irr", "内部收益率", "收益率", "回报率", "rate of return")),
    ("npv", "净现值 NPV", "NPV", ("npv", "净现值", "net present value", "present value")),
    (
        "payback_static",
        "静态回收期",
        "static payback",
        ("回收期", "回本", "收回投资", "payback", "pay back", "pays back", "pays for itself", "break even"),
    ),
    ("payback_discounted", "动态回收期", "discounted payback", ("动态回收", "discounted payback")),
    (
        "lcoe",
        "度电成本 LCOE",
        "LCOE",
        ("lcoe", "度电成本", "平准化", "levelized", "levelised", "cost of electricity"),
    ),
    (
        "investment",
        "总投资",
        "total investment",
        (
            "总投资",
            "投资额",
            "投资多少",
            "投多少",
            "花多少钱",
            "要多少钱",
            "investment",
            "capex total",
            "total cost",
            "cost in total",
            "upfront",
        ),
    ),
    (
        "first_year_generation_kwh",
        "首年发电量",
        "first-year generation",
        ("发电量", "发多少电", "发电多少", "generation", "generate", "produce", "kwh a year", "output"),
    ),
    (
        "first_year_revenue",
        "首年收益",
        "first-year revenue",
        ("首年收益", "年收益", "收入", "赚多少", "revenue", "income", "earn"),
    ),
)


# "cost" as the verb of a question about the whole ("How much would the whole thing cost me?", "what
# did it cost in the end"): the total investment; "cost per watt" / "cost of electricity" name other figures.
_COST_VERB = re.compile(
    r"\b(?:how much|what)\b[^?.]*?\b(?:would|will|does|did|do|is|was|it'?s?|to)\b[^?.]*?\bcost(?:s|ing)?\b"
    r"(?!\s*(?:per|/|of electricity))",
    re.I,
)


def recall(question: str, headline: dict[str, Any], lang: str) -> str:
    """The figures of the latest case that `question` asks about, as a sentence ("" when it asks none)."""
    text = question.lower()
    asked = [
        m
        for m in _METRICS
        if any(word in text for word in m[3]) or (m[0] == "investment" and _COST_VERB.search(text))
    ]
    asked = [
        m for m in asked if not (m[0] == "payback_static" and any(w in text for w in ("动态", "discounted")))
    ]
    results, inputs = headline.get("results") or {}, headline.get("inputs") or {}
    if not asked or not results:
        return ""
    parts = [(zh, en, _figure(key, results.get(key), lang)) for key, zh, en, _ in asked]
    where = (
        f"{place_name(str(inputs.get('location', '')), lang)} · "
        f"{type_name(str(inputs.get('project_type', '')), lang)} · {inputs.get('capacity_kw', 0):g} kW"
    )
    which = headline.get("which", "")  # an earlier result than the newest (nodes.understand)
    if lang == "en":
        head = {"first": "the first", "before": "the previous"}.get(which, "the latest")
        return f"From {head} calculation ({where}): " + "; ".join(f"{en} {v}" for _, en, v in parts) + "."
    head = {"first": "第一次", "before": "上一次"}.get(which, "最近一次")
    return f"{head}测算（{where}）：" + "；".join(f"{zh} {v}" for zh, _, v in parts) + "。"


def _figure(key: str, value: Any, lang: str) -> str:
    if value is None:
        return "n/a" if lang == "en" else "无（运营期内收不回投资）"
    if key == "irr":
        return f"{value:.2%}"
    if key.startswith("payback"):
        return f"{value:.1f} years" if lang == "en" else f"{value:.1f} 年"
    if key == "lcoe":
        return f"{value:.3f} yuan/kWh" if lang == "en" else f"{value:.3f} 元/kWh"
    if key == "first_year_generation_kwh":
        return f"{value:,.0f} kWh"
    return f"{value / 10_000:,.2f} 万元" if lang != "en" else f"{value:,.0f} yuan"


def save_case(ctx: StepContext, case: dict[str, Any]) -> dict[str, Any]:
    """Store `case` once (unless it came from the store); its id, inputs and headline results."""
    results = {k: round(v, 6) if isinstance(v, float) else v for k, v in case["results"].items()}
    headline = {
        "inputs": headline_inputs(case["inputs"]),
        "defaulted": [d["field"] for d in case.get("defaults_used", [])],
        "results": results,
    }
    ref = case.get("ref") or ctx.save_result(CASE, {k: v for k, v in case.items() if k != "ref"}, headline)
    return {**headline, "case": ref}


def latest_case(ctx: StepContext) -> dict[str, Any] | None:
    """The conversation's newest PV case (with its store id under `ref`), or None."""
    found = ctx.latest_result(CASE)
    return None if found is None else {**found[1], "ref": found[0].ref}


def _from_deps(ctx: StepContext) -> dict[str, Any] | None:
    for seq in sorted(ctx.deps, reverse=True):
        ref = (ctx.deps[seq].get("context") or {}).get("case")
        if isinstance(ref, str):
            return {**ctx.load_result(ref), "ref": ref}
    return None


def base_case(
    ctx: StepContext,
    purpose: str,
    strip: Callable[[str], str] = lambda text: text,
    fill: dict[str, Any] | None = None,
) -> dict[str, Any] | Resolution:
    """The calculation this step works on (`ref`: its store id, if stored), or the question to ask.

    Order: a dependency's result; else the conversation's latest case, updated with any values
    stated for this step; else a calculation from the values stated here. `fill` holds values
    used only where neither the user nor the latest case gives one (e.g. a starting capacity
    when the capacity is what reverse optimisation solves for).
    """
    if (case := _from_deps(ctx)) is not None:
        return case
    fields = {k: v for k, v in gather_fields(ctx, strip).items() if k != "reuse_previous"}
    previous = latest_case(ctx)
    if previous is not None and previous.get("inputs"):
        if not fields:
            return previous
        fields = merge_fields(previous_given(previous), apply_changes(fields, previous["inputs"])[0])
    fields.pop("changes", None)
    for key, value in (fill or {}).items():
        group = next((g for g in EXCLUSIVE_GROUPS if key in g), (key,))
        if not any(k in fields for k in group):
            fields[key] = value
    lang = ctx.language
    resolution = resolve(ctx, fields, purpose, lang)
    if resolution.inputs is None:
        if previous is None:
            resolution.question = (
                "I found no earlier calculation. " if lang == "en" else "没有找到已有的测算方案。"
            ) + resolution.question
        return resolution
    return make_case(resolution.inputs, resolution.defaults_used)


def artifact_path(ctx: StepContext, kind: str, suffix: str) -> Path:
    """`data_dir/artifacts/<user>/<conversation>/<plan>_<kind>.<suffix>` (same name on re-run)."""
    folder = Path(ctx.data_dir) / "artifacts" / _safe(ctx.user_id) / _safe(ctx.conversation_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{_safe(ctx.plan_id)}_{kind}.{suffix}"


def artifact_name(ctx: StepContext, path: Path) -> str:
    """How state and stream name an artifact: relative to the data dir, never the server's absolute path.

    Clients turn it into `/artifacts/<conversation>/<file name>` (HTTP) or a local path (CLI).
    """
    return path.resolve().relative_to(Path(ctx.data_dir).resolve()).as_posix()


def _safe(name: str) -> str:
    """One path component per id; different ids give different names.

    Word characters and `-` stay, every other character (and a leading dot) becomes %XX of its UTF-8 bytes, so `..`, `/` or
    `a/b` vs `a_b` can neither leave the artifact folder nor share a folder.
    """
    encoded = re.sub(r"[^\w.-]", lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), name)
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded.encode()) > _MAX_COMPONENT:  # a file name has at most 255 bytes (ENAMETOOLONG)
        encoded = encoded[:40] + "~" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:24]
    return encoded or "%"
