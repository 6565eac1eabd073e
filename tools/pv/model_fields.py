"""Model mode: a chat model fills the PV inputs the Chinese parser could not read ("about half a megawatt").

The deterministic parser (`tools.pv.inputs`) always runs and always wins. The model is asked at
most once per step (answers are cached per model and texts), and only when it can help:

- the parser left a required input missing (location, project type, capacity or roof area), or
- its leftover text still holds a number it could not read (digits, or Chinese numerals such as 五百);
- and never when the user refers to the earlier calculation ("其他参数不变"): those values come
  from memory.

The model answers by calling the `PvInputs` tool (structured output, canonical units). Merge
rule: a model value is used only for a quantity the parser and the plan context did not state at
all (a whole `EXCLUSIVE_GROUPS` group, so "容量500" without a unit is still asked about, not
guessed). Every value is validated with the ranges of `tools.pv.resolve` (the place must be in
the yield table). Any failure — HTTP error, timeout, a reply without the tool call, malformed
JSON, one invalid value — logs a warning and the step continues with the parser's fields alone.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from tools.faults import model_errors
from tools.model.calls import invoke_forced
from tools.pv.data import find_locations
from tools.pv.inputs import EXCLUSIVE_GROUPS, normalize, parse_with_rest
from tools.pv.resolve import LABELS, fmt

__all__ = ["PV_FIELDS_PROMPT", "PvInputs", "fill_with_model", "needs_model"]

log = logging.getLogger("plangraph.pv_model_fields")

PV_FIELDS_PROMPT = """你从用户关于光伏项目的话里提取测算参数，并且只通过调用 PvInputs 工具回答。
只填写用户明确说出的值；没有说到的字段留空（null），不要猜测，也不要填默认值。
按字段说明换算成规定单位：装机容量用 kW（“半兆瓦”= 500），电价用 元/kWh（“八毛五一度”= 0.85），
比例和衰减用 0–1 的小数（80% 写 0.8），年用电量用 kWh（“200万度”= 2000000）。
项目地点写中文的城市或区县名（如“杭州市余杭区”）；项目类型只能是“工商业”或“户用”。
没有写单位、无法确定单位的数字不要填。"""

_REQUIRED = (
    ("location", "location_unknown"),
    ("project_type",),
    ("capacity_kw", "capacity_unitless", "roof_area_m2"),
)
_UNREAD_NUMBER = re.compile(r"\d|[零〇一二两三四五六七八九十百千万亿]{2,}")
_CACHE_SIZE = 64
_cache: OrderedDict[tuple[int, tuple[str, ...]], tuple[BaseChatModel, dict[str, Any] | None]] = OrderedDict()
_cache_lock = threading.Lock()


class PvInputs(BaseModel):
    """光伏测算参数：只填用户明确说出的值，没说的留空（null）。单位见各字段说明。"""

    location: str | None = Field(None, description="项目地点：中文城市或区县名，如“杭州市余杭区”")
    project_type: Literal["工商业", "户用"] | None = Field(None, description="项目类型")
    capacity_kw: float | None = Field(None, gt=0, le=50_000, description="装机容量，kW（1 MW = 1000 kW）")
    roof_area_m2: float | None = Field(None, gt=0, le=1_000_000, description="屋顶面积，平方米")
    capex_yuan_per_w: float | None = Field(
        None, ge=1.0, le=8.0, description="单瓦造价，元/W（3500 元/kW = 3.5）"
    )
    electricity_price: float | None = Field(
        None, ge=0.1, le=2.0, description="自用电价，元/kWh（1 度 = 1 kWh）"
    )
    feed_in_price: float | None = Field(None, ge=0.1, le=1.0, description="上网电价，元/kWh")
    self_consumption: float | None = Field(None, ge=0.0, le=1.0, description="自发自用比例，0–1 小数")
    om_yuan_per_w_year: float | None = Field(None, ge=0.0, le=0.3, description="运维成本，元/W·年")
    first_year_degradation: float | None = Field(None, ge=0.0, le=0.1, description="首年衰减，0–1 小数")
    annual_degradation: float | None = Field(None, ge=0.0, le=0.03, description="逐年衰减，0–1 小数")
    lifetime_years: int | None = Field(None, ge=5, le=40, description="运营期，年")
    discount_rate: float | None = Field(None, ge=0.0, le=0.3, description="折现率，0–1 小数")
    specific_yield: float | None = Field(None, ge=500.0, le=2200.0, description="年等效利用小时数，kWh/kWp")
    annual_load_kwh: float | None = Field(None, gt=0, description="年用电量，kWh")


def needs_model(texts: Sequence[str], fields: dict[str, Any]) -> bool:
    """Whether asking the model could add anything (see the module docstring)."""
    if fields.get("reuse_previous"):
        return False
    if any(not set(group) & fields.keys() for group in _REQUIRED):
        return True
    return any(_UNREAD_NUMBER.search(parse_with_rest(text)[1]) for text in texts)


def fill_with_model(
    model: BaseChatModel,
    texts: Sequence[str],
    fields: dict[str, Any],
    emit: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """`fields` (the parser's) plus the model's values for quantities they lack; `fields` on any failure."""
    texts = list(dict.fromkeys(t.strip() for t in texts if t.strip()))
    if not texts or not needs_model(texts, fields):
        return fields
    answer, fresh = _cached_answer(model, texts)
    if not answer:
        return fields
    # a quantity the words change by an amount, or give twice, is the parser's too ("再便宜0.4元/W")
    found = set(fields) | set(fields.get("changes") or {}) | set(fields.get("conflicts") or {})
    added = {k: v for k, v in answer.items() if not set(_group(k)) & found}
    problem = _capacity_problem({**fields, **added}) if "capacity_kw" in added else None
    if problem:
        if fresh:
            log.warning("model fields ignored: %s; using the parser's fields alone", problem)
        return fields
    if added and fresh:
        log.info("model filled %s", sorted(added))
        emit("已根据您的描述识别出：" + "、".join(f"{LABELS[k][0]} {fmt(k, v)}" for k, v in added.items()))
    return {**fields, **added}


def _group(key: str) -> tuple[str, ...]:
    return next((group for group in EXCLUSIVE_GROUPS if key in group), (key,))


def _capacity_problem(merged: dict[str, Any]) -> str | None:
    """The project-type limit of `tools.pv.resolve` on a capacity the model supplied."""
    cap = merged["capacity_kw"]
    if merged.get("project_type") == "户用" and cap > 100:
        return f"capacity_kw {cap:g} is above 100 kW for a household project"
    if merged.get("project_type") == "工商业" and cap < 1:
        return f"capacity_kw {cap:g} is below 1 kW for a commercial project"
    return None


def _cached_answer(model: BaseChatModel, texts: list[str]) -> tuple[dict[str, Any] | None, bool]:
    """The model's validated values for `texts` and whether they were just asked for (once per model and texts)."""
    key = (id(model), tuple(texts))
    with _cache_lock:
        if key in _cache:
            return _cache[key][1], False
    answer = _ask(model, texts)
    with _cache_lock:
        _cache[key] = (model, answer)  # the model is kept so its id is not reused while cached
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return answer, True


def _ask(model: BaseChatModel, texts: list[str]) -> dict[str, Any] | None:
    """One tool-call request; the validated non-empty values, or None (warning logged) on any failure."""
    request = "用户的原话（按时间先后）：\n" + "\n".join(f"- {t}" for t in texts)
    try:
        # stream=False: a cut-off stream must not pass as a shorter, valid answer.
        # the forced form this server accepts (llama-server refuses a named tool_choice), else "auto"
        # with the call read back from text: never a silent "no call" because of the request's form.
        reply = invoke_forced(
            model,
            PvInputs,
            PvInputs.__name__,
            tuple(PvInputs.model_fields),
            [SystemMessage(PV_FIELDS_PROMPT), HumanMessage(request)],
            stream=False,
        )
    except NotImplementedError:
        log.warning(
            "model fields skipped: %s cannot call tools; using the parser's fields", type(model).__name__
        )
        return None
    except model_errors() as err:
        log.warning("model fields failed (%s: %s); using the parser's fields alone", type(err).__name__, err)
        return None
    call = next((c for c in getattr(reply, "tool_calls", []) if c["name"] == PvInputs.__name__), None)
    if call is None:
        malformed = getattr(reply, "invalid_tool_calls", [])
        why = f"malformed arguments {malformed[0].get('args')!r}" if malformed else "no PvInputs call"
        log.warning("model fields ignored: %s; using the parser's fields alone", why)
        return None
    try:
        values = PvInputs.model_validate(call["args"]).model_dump(exclude_none=True)
    except ValidationError as err:
        log.warning("model fields ignored: invalid values (%s); using the parser's fields alone", err)
        return None
    if "location" in values:
        places = find_locations(normalize(values["location"]))
        if len(places) != 1:
            log.warning(
                "model fields ignored: location %r is not one known place; using the parser's fields alone",
                values["location"],
            )
            return None
        values["location"] = places[0][1].name
    return values
