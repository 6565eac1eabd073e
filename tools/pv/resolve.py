"""Parsed fields → complete, validated inputs of the financial model (or one question to ask).

Required: location (a place in `tools/pv/tables/yield.csv`, or both the yield and feed-in price given),
project type, and capacity (or roof area). Everything else takes the documented default of the
project type, and every default used is listed with its basis. Questions and labels come in the
user's language (`lang` "zh" or "en"); a wrong value is named back with what to fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tools.lang import pick
from tools.pv.data import (
    PROJECT_TYPES,
    defaults_for,
    feed_in_price,
    find_locations,
    locations,
    places_near,
)

UNSPECIFIED = "未指定"  # the location of a case given by its yield and feed-in price alone

__all__ = [
    "PLAUSIBLE",
    "implausible",
    "DEFAULTED",
    "LABELS",
    "LABELS_EN",
    "MODEL_FIELDS",
    "Resolution",
    "fmt",
    "label",
    "place_name",
    "resolve_inputs",
    "type_name",
]

LABELS: dict[str, tuple[str, str]] = {
    "location": ("项目地点", ""),
    "project_type": ("项目类型", ""),
    "capacity_kw": ("装机容量", "kW"),
    "roof_area_m2": ("屋顶面积", "m²"),
    "capex_yuan_per_w": ("单瓦造价", "元/W"),
    "electricity_price": ("自用电价", "元/kWh"),
    "feed_in_price": ("上网电价", "元/kWh"),
    "self_consumption": ("自发自用比例", "%"),
    "om_yuan_per_w_year": ("运维成本", "元/W·年"),
    "first_year_degradation": ("首年衰减", "%"),
    "annual_degradation": ("逐年衰减", "%"),
    "lifetime_years": ("运营期", "年"),
    "discount_rate": ("折现率", "%"),
    "specific_yield": ("年等效利用小时数", "kWh/kWp"),
    "annual_load_kwh": ("年用电量", "kWh"),
}
LABELS_EN: dict[str, tuple[str, str]] = {
    "location": ("Location", ""),
    "project_type": ("Project type", ""),
    "capacity_kw": ("Capacity", "kW"),
    "roof_area_m2": ("Roof area", "m²"),
    "capex_yuan_per_w": ("Cost per watt", "yuan/W"),
    "electricity_price": ("Electricity price (self-consumed)", "yuan/kWh"),
    "feed_in_price": ("Feed-in price", "yuan/kWh"),
    "self_consumption": ("Self-consumption", "%"),
    "om_yuan_per_w_year": ("O&M cost", "yuan/W·year"),
    "first_year_degradation": ("First-year degradation", "%"),
    "annual_degradation": ("Annual degradation", "%"),
    "lifetime_years": ("Lifetime", "years"),
    "discount_rate": ("Discount rate", "%"),
    "specific_yield": ("Specific yield", "kWh/kWp"),
    "annual_load_kwh": ("Annual consumption", "kWh"),
}
MODEL_FIELDS = tuple(LABELS)
_TYPE_EN = {"工商业": "commercial & industrial", "户用": "residential"}
DEFAULTED = (
    "capex_yuan_per_w",
    "electricity_price",
    "self_consumption",
    "om_yuan_per_w_year",
    "first_year_degradation",
    "annual_degradation",
    "lifetime_years",
    "discount_rate",
)
_ASK = {
    "location": "项目地点（城市或区县，如“杭州余杭区”）",
    "project_type": "项目类型（工商业还是户用）",
    "capacity_kw": "装机容量（如“500kW”，也可以告诉我屋顶面积，如“屋顶面积3000平方米”）",
}
_ASK_EN = {
    "location": "the location (a city or district, e.g. “Hangzhou Yuhang”)",
    "project_type": "the project type (commercial & industrial or residential)",
    "capacity_kw": "the capacity (e.g. “500 kW”, or the roof area, e.g. “roof area 3000 m²”)",
}


def label(name: str, lang: str = "zh") -> str:
    """The field's name for people, in `lang`."""
    return (LABELS_EN if lang == "en" else LABELS).get(name, (name, ""))[0]


def type_name(project_type: str, lang: str = "zh") -> str:
    """The project type ("工商业" / "户用") in `lang`."""
    return _TYPE_EN.get(project_type, project_type) if lang == "en" else project_type


def place_name(name: str, lang: str = "zh") -> str:
    """A location's display name in `lang` ("杭州市余杭区" → "Yuhang, Hangzhou (杭州市余杭区)")."""
    if lang != "en":
        return name
    place = next((loc for loc in locations() if loc.name == name), None)
    return f"{place.name_en} ({name})" if place else name


def fmt(name: str, value: Any, lang: str = "zh") -> str:
    """`value` of field `name` for people: "500 kW", "80%", "0.85 元/kWh" ("0.85 yuan/kWh" in English)."""
    unit = (LABELS_EN if lang == "en" else LABELS).get(name, ("", ""))[1]
    if value is None:
        return pick(lang, "未提供", "not given")
    if name == "project_type":
        return type_name(str(value), lang)
    if name == "location":
        return place_name(str(value), lang)
    if unit == "%":
        return f"{value * 100:g}%"
    if isinstance(value, float):
        return f"{value:.6g} {unit}".strip() if abs(value) < 1e5 else f"{value:,.0f} {unit}".strip()
    return f"{value} {unit}".strip()


@dataclass
class Resolution:
    """Either `inputs` (complete) or a `question` about the `missing` / wrong fields."""

    inputs: dict[str, Any] | None = None
    defaults_used: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    question: str = ""


def _join(parts: list[str], lang: str = "zh") -> str:
    if len(parts) == 1:
        return parts[0]
    return pick(lang, "、".join(parts[:-1]) + "和" + parts[-1], ", ".join(parts[:-1]) + " and " + parts[-1])


def _ask_missing(missing: list[str], purpose: str, lang: str) -> Resolution:
    if lang == "en":
        asked = _join([_ASK_EN[m] for m in missing], lang)
        return Resolution(missing=missing, question=f"To {purpose}, please tell me {asked}.")
    return Resolution(
        missing=missing, question=f"要{purpose}，还需要您告诉我{_join([_ASK[m] for m in missing])}。"
    )


def _fix(name: str, question: str) -> Resolution:
    return Resolution(missing=[name], question=question)


def resolve_inputs(
    fields: dict[str, Any],
    purpose: str = "",
    lang: str = "zh",
    standing: Mapping[str, tuple[Any, str, str]] | None = None,
) -> Resolution:
    """Complete `fields` with defaults and validate them; `purpose` starts the missing-input question.

    `standing` holds the user's own defaults (field → value, basis, fact id; a stated long-term
    fact such as "我们的电价是0.72"): where the user gave no value for a field of `DEFAULTED` or the
    feed-in price, the standing value is used instead of the table's, and listed among the
    defaults with its basis and `fact_id`. A value in `fields` always wins.
    """
    standing = standing or {}
    purpose = purpose or pick(lang, "完成光伏经济性测算", "calculate the PV project's economics")
    for name, values in (fields.get("conflicts") or {}).items():
        shown = pick(lang, "和", " and ").join(fmt(name, v, lang) for v in values)
        return _fix(
            name,
            pick(
                lang,
                f"您给了不同的{label(name)}：{shown}，请确认用哪一个。",
                f"You gave different values for the {label(name, lang).lower()}: {shown}. Which one should I use?",
            ),
        )
    given = fields.get("location")
    if isinstance(given, str) and given != UNSPECIFIED and all(loc.name != given for loc in locations()):
        # a structured answer ({"location": "杭州"}) names the place as people do; an unknown one is said
        found = find_locations(given.lower())  # English spellings are matched in lower case
        fields = {**fields, **({"location": found[0][1].name} if found else {"location_unknown": given})}
    if "location_unknown" in fields:
        return _fix("location", _unknown_place(str(fields["location_unknown"]), lang))
    if "capacity_unitless" in fields:
        n = fields["capacity_unitless"]
        return _fix(
            "capacity_kw",
            pick(
                lang,
                f"装机容量“{n:g}”没有写单位，请确认是 kW 还是 MW（例如“500kW”）。",
                f"The capacity “{n:g}” has no unit: is it kW or MW? (e.g. “500 kW”)",
            ),
        )
    if "capex_unitless" in fields:
        n = fields["capex_unitless"]
        return _fix(
            "capex_yuan_per_w",
            pick(
                lang,
                f"造价“{n:g}”没有写单位，请确认是 元/W、元/kW 还是总投资万元。",
                f"The cost “{n:g}” has no unit: is it yuan/W, yuan/kW or a total investment?",
            ),
        )
    place = next((loc for loc in locations() if loc.name == fields.get("location")), None)
    missing = [
        name
        for name, ok in (
            ("location", place is not None or {"specific_yield", "feed_in_price"} <= fields.keys()),
            ("project_type", fields.get("project_type") in PROJECT_TYPES),
            ("capacity_kw", "capacity_kw" in fields or "roof_area_m2" in fields),
        )
        if not ok
    ]
    if missing:
        return _ask_missing(missing, purpose, lang)
    ptype = fields["project_type"]
    table = defaults_for(ptype)
    used: list[dict[str, Any]] = []

    def default(name: str, value: Any, basis: str) -> Any:
        record = {"field": name, "label": label(name, lang), "value": value, "text": fmt(name, value, lang)}
        if name in standing:
            value, basis, fact_id = standing[name]
            record.update(value=value, text=fmt(name, value, lang), fact_id=fact_id)
        used.append({**record, "basis": basis})
        return value

    inputs: dict[str, Any] = {k: fields[k] for k in MODEL_FIELDS if k in fields}
    inputs.update(
        project_type=ptype,
        roof_area_m2=fields.get("roof_area_m2"),
        annual_load_kwh=fields.get("annual_load_kwh"),
    )
    inputs.update(
        location=place.name if place else UNSPECIFIED,
        province=place.province if place else "",
        city=place.city if place else "",
    )
    if "capacity_kw" not in fields:
        area = table["area_w_per_m2"].value
        area_default = table["area_w_per_m2"]
        inputs["capacity_kw"] = default(
            "capacity_kw",
            fields["roof_area_m2"] * area / 1000,
            pick(
                lang,
                f"按屋顶面积 {fields['roof_area_m2']:g} m² × {area:g} W/m² 估算（{area_default.basis}）",
                f"roof area {fields['roof_area_m2']:g} m² × {area:g} W/m² ({area_default.basis_en})",
            ),
        )
    if "specific_yield" not in fields and place:
        inputs["specific_yield"] = default(
            "specific_yield",
            place.specific_yield,
            pick(
                lang,
                f"{place.name}：{place.source}",
                f"{place.name_en}: Global Solar Atlas 2.0 (Solargis/World Bank) PVOUT, approximate, rounded to 10",
            ),
        )
    if "feed_in_price" not in fields and place:
        benchmark = feed_in_price(place.province) or (
            (standing["feed_in_price"][0], "") if "feed_in_price" in standing else None
        )
        if benchmark is None:
            return _fix(
                "feed_in_price",
                pick(
                    lang,
                    f"没有{place.province}的燃煤基准价数据，请告诉我上网电价（元/kWh）。",
                    f"I have no coal benchmark price for {place.province}; please tell me the feed-in price (yuan/kWh).",
                ),
            )
        inputs["feed_in_price"] = default(
            "feed_in_price",
            benchmark[0],
            pick(
                lang,
                f"{place.province}燃煤发电基准价：{benchmark[1]}",
                f"coal-fired benchmark price of {place.province} (NDRC 发改价格规〔2019〕1658号)",
            ),
        )
    for name in DEFAULTED:
        if name not in fields:
            inputs[name] = default(
                name, table[name].value, pick(lang, table[name].basis, table[name].basis_en)
            )
    if "capex_total_yuan" in fields:
        inputs["capex_yuan_per_w"] = fields["capex_total_yuan"] / (inputs["capacity_kw"] * 1000)
        used[:] = [u for u in used if u["field"] != "capex_yuan_per_w"]
    if "om_total_yuan_per_year" in fields:
        inputs["om_yuan_per_w_year"] = fields["om_total_yuan_per_year"] / (inputs["capacity_kw"] * 1000)
        used[:] = [u for u in used if u["field"] != "om_yuan_per_w_year"]
    inputs["lifetime_years"] = int(inputs["lifetime_years"])
    problem = _check(inputs, lang)
    return problem or Resolution(inputs=inputs, defaults_used=used)


def _unknown_place(name: str, lang: str) -> str:
    """A place the tables do not hold, named back with the known places to choose from (never replaced)."""
    province, near = places_near(name)
    count = len(locations())
    if lang == "en":
        shown = ", ".join(loc.name_en for loc in near)
        where = (
            f"In {province} I have: {shown}."
            if province
            else f"I have {count} cities and districts, e.g. {shown}."
        )
        return (
            f"I have no solar data for “{name}”, so I did not calculate anything. {where} Please name the "
            "project's city or the nearest known one, or tell me the local specific yield (kWh/kWp) and "
            "feed-in price."
        )
    shown = "、".join(loc.name for loc in near)
    where = (
        f"{province}有数据的地点：{shown}。"
        if province
        else f"我有 {count} 个城市和区县的数据，例如{shown}。"
    )
    return (
        f"没有找到“{name}”的光照数据，所以还没有测算。{where}"
        "请告诉我项目所在的城市或最近的已知城市，或直接告诉我当地的年等效利用小时数和上网电价。"
    )


# (field, lowest, highest, what is usual — Chinese, English)
_RANGES = (
    (
        "capex_yuan_per_w",
        1.0,
        8.0,
        "一般在 2.5–4.5 元/W；如果您给的是 元/kW，请写成“3500元/kW”",
        "usually 2.5–4.5 yuan/W; for yuan/kW write e.g. “3500 yuan/kW”",
    ),
    (
        "electricity_price",
        0.1,
        2.0,
        "一般在 0.3–1.5 元/kWh；是否把“分”写成了“元”？",
        "usually 0.3–1.5 yuan/kWh",
    ),
    (
        "feed_in_price",
        0.1,
        1.0,
        "各省燃煤基准价在 0.25–0.46 元/kWh 之间",
        "provincial coal benchmark prices are 0.25–0.46 yuan/kWh",
    ),
    ("self_consumption", 0.0, 1.0, "应在 0%–100% 之间", "it must be between 0% and 100%"),
    ("om_yuan_per_w_year", 0.0, 0.3, "一般在 0.02–0.06 元/W·年", "usually 0.02–0.06 yuan/W·year"),
    ("first_year_degradation", 0.0, 0.1, "一般在 1%–3%", "usually 1%–3%"),
    ("annual_degradation", 0.0, 0.03, "一般在 0.4%–0.7%", "usually 0.4%–0.7%"),
    ("lifetime_years", 5, 40, "一般为 20–30 年", "usually 20–30 years"),
    ("discount_rate", 0.0, 0.3, "一般在 5%–10%", "usually 5%–10%"),
    (
        "specific_yield",
        500.0,
        2200.0,
        "我国大部分地区在 900–1700 kWh/kWp",
        "900–1700 kWh/kWp in most of China",
    ),
)


# The plausible range of each checked input: what a calculation accepts, and where reverse optimisation searches.
PLAUSIBLE: dict[str, tuple[float, float]] = {name: (low, high) for name, low, high, _, _ in _RANGES}


def implausible(name: str, value: Any, lang: str = "zh") -> str:
    """What is wrong with one value of a checked field, named back with what is usual ("" when plausible).

    The same ranges as a calculation's (`_RANGES`): a long-term fact ("以后电价都按-1元/度算") is checked
    before it is kept, so it never makes every later calculation ask.
    """
    for field_name, low, high, hint, hint_en in _RANGES:
        if field_name == name and isinstance(value, int | float) and not low <= value <= high:
            shown = fmt(name, value, lang)
            return pick(
                lang,
                f"您给的{LABELS[name][0]}是 {shown}，不合理（{hint}）",
                f"{LABELS_EN[name][0]} {shown} is not plausible ({hint_en})",
            )
    return ""


def _check(v: dict[str, Any], lang: str = "zh") -> Resolution | None:
    """The first implausible value, named back with what to fix; nothing is calculated."""
    cap, household = v["capacity_kw"], v["project_type"] == "户用"
    if v.get("roof_area_m2") is not None and not 0 < v["roof_area_m2"] <= 1_000_000:
        area = v["roof_area_m2"]
        return _fix(
            "roof_area_m2",
            pick(
                lang,
                f"屋顶面积 {area:g} m² 不合理，请确认面积（平方米）。",
                f"A roof area of {area:g} m² is not plausible; please check the area (m²).",
            ),
        )
    if cap <= 0:
        return _fix(
            "capacity_kw",
            pick(
                lang,
                f"您给的装机容量是 {cap:g} kW，装机容量必须大于 0，请告诉我正确的装机容量（如“500kW”）。",
                f"You gave a capacity of {cap:g} kW; the capacity must be above 0. Please tell me the "
                "right capacity (e.g. “500 kW”).",
            ),
        )
    if household and cap > 100:
        return _fix(
            "capacity_kw",
            pick(
                lang,
                f"户用光伏一般在 3–50 kW，您给的是 {cap:g} kW。是单位写错了，还是其实是工商业项目？请确认装机容量。",
                f"Residential systems are usually 3–50 kW, but you gave {cap:g} kW. Is the unit wrong, or "
                "is it a commercial & industrial project? Please confirm the capacity or the project type.",
            ),
        )
    if not household and not 1 <= cap <= 50_000:
        hint = (
            pick(lang, "是否应为 MW？", "should it be MW?")
            if cap < 1
            else pick(lang, "是否把 kW 写成了 MW？", "was kW written as MW?")
        )
        return _fix(
            "capacity_kw",
            pick(
                lang,
                f"工商业分布式光伏装机容量 {cap:g} kW 超出常见范围（1 kW–50 MW），{hint}请确认装机容量。",
                f"A commercial capacity of {cap:g} kW is outside the usual range (1 kW–50 MW); {hint} "
                "Please confirm the capacity.",
            ),
        )
    for name, low, high, hint, hint_en in _RANGES:
        if not low <= v[name] <= high:
            shown = fmt(name, v[name], lang)
            return _fix(
                name,
                pick(
                    lang,
                    f"您给的{LABELS[name][0]}是 {shown}，不合理（{hint}），请确认{LABELS[name][0]}。",
                    f"You gave {LABELS_EN[name][0].lower()} {shown}, which is not plausible ({hint_en}). "
                    f"Please correct the {LABELS_EN[name][0].lower()}.",
                ),
            )
    load = v.get("annual_load_kwh")
    if load is not None and load <= 0:
        return _fix(
            "annual_load_kwh",
            pick(
                lang,
                f"您给的年用电量是 {load:g} kWh，年用电量必须大于 0，请确认年用电量（如“年用电量200万度”）。",
                f"You gave an annual consumption of {load:g} kWh; it must be above 0 (e.g. “2 million kWh a year”).",
            ),
        )
    return None
