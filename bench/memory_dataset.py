"""A deterministic long multi-session conversation (Chinese + English) with planted facts.

`build(turns, seed)` returns the messages (with ids, created_at, some tool closures and big tool
results) and the planted facts: the id of the message that states each fact, and a later question
that paraphrases it. Distractor turns reuse the same vocabulary for other sites and values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

SITES_ZH = ["杭州余杭", "苏州园区", "宁波北仑", "合肥高新", "无锡新区", "南京江宁", "嘉兴平湖", "绍兴柯桥"]
SITES_EN = [
    "Riverside",
    "Hillcrest",
    "Lakeview",
    "Oakridge",
    "Maple Park",
    "Harbor Point",
    "Cedar Mill",
    "Stonebridge",
]

FACTS_ZH = [
    ("{site}项目的屋顶面积是 {n} 平方米", "{site}项目屋顶有多大", lambda r: r.randint(1000, 9000)),
    ("{site}项目的工商业电价是每度 0.{n} 元", "{site}那边电价多少", lambda r: r.randint(55, 99)),
    ("{site}项目预算上限 {n} 万元", "{site}项目的投资预算是多少", lambda r: r.randint(80, 900)),
    (
        "{site}项目业主偏好{n}逆变器",
        "{site}用哪个牌子的逆变器",
        lambda r: r.choice(["华为", "阳光电源", "固德威", "锦浪"]),
    ),
    ("{site}项目计划 {n} 月并网", "{site}什么时候并网", lambda r: r.randint(1, 12)),
]
FACTS_EN = [
    (
        "The {site} plant has a roof area of {n} square metres",
        "How large is the roof at {site}?",
        lambda r: r.randint(1000, 9000),
    ),
    (
        "At {site} the grid tariff is 0.{n} dollars per kWh",
        "What electricity price applies at {site}?",
        lambda r: r.randint(10, 40),
    ),
    (
        "The {site} owner wants payback within {n} years",
        "What payback period does the {site} owner expect?",
        lambda r: r.randint(4, 9),
    ),
    (
        "The {site} site will use {n} panels",
        "Which module type is planned for {site}?",
        lambda r: r.choice(["bifacial", "monocrystalline", "thin-film", "PERC"]),
    ),
    (
        "The {site} loan interest rate is {n} percent",
        "What is the financing rate for {site}?",
        lambda r: round(r.uniform(3, 7), 1),
    ),
]
FILLER_ZH = [
    ("{site}项目的屋顶情况还需要现场勘察", "好的，我安排勘察后再更新屋顶数据。"),
    ("电价政策最近有变化吗", "各地分时电价在调整，建议按最新文件测算。"),
    ("逆变器一般怎么选", "看容量匹配、效率和售后，主流品牌差别不大。"),
    ("帮我解释一下内部收益率", "IRR 是让净现值为零的折现率，用来衡量项目收益。"),
    ("{site}的并网流程复杂吗", "需要向电网公司申请接入，一般一到两个月。"),
    ("预算怎么估比较稳妥", "按每瓦造价乘以装机容量，再加一成不可预见费。"),
]
FILLER_EN = [
    (
        "Can you remind me how payback is computed?",
        "Payback is the year cumulative cash flow turns positive.",
    ),
    ("What affects the roof survey at {site}?", "Shading, structure and access; we will schedule a visit."),
    ("Are panel prices still falling?", "Module prices have dropped this year; quotes vary by supplier."),
    ("How do tariffs change the result?", "A higher tariff shortens payback and raises IRR."),
    ("Do we need a new loan for {site}?", "That depends on the budget; we can compare financing options."),
    ("Summarise the sensitivity analysis please", "Tariff and capex are the two most sensitive inputs."),
]
START = datetime(2025, 1, 6, 9, 0, 0)


@dataclass
class Planted:
    """A fact stated once and asked about later."""

    message_id: str
    fact: str
    question: str
    lang: str
    turn: int


def _kw(t: datetime, **extra: object) -> dict:
    return {"created_at": t.isoformat(), **extra}


def build(
    turns: int = 1000, facts: int = 40, turns_per_session: int = 20, seed: int = 7
) -> tuple[list[BaseMessage], list[Planted]]:
    """Messages of `turns` user turns over sessions two days apart, and the planted facts."""
    rng = random.Random(seed)
    fact_turns = set(rng.sample(range(turns - 5), facts))
    messages: list[BaseMessage] = []
    planted: list[Planted] = []
    used: set[tuple[str, int]] = set()
    for turn in range(turns):
        session, pos = divmod(turn, turns_per_session)
        lang = "zh" if session % 2 == 0 else "en"
        t = START + timedelta(days=2 * session, minutes=2 * pos)
        sites = SITES_ZH if lang == "zh" else SITES_EN
        hid, aid = f"t{turn}_u", f"t{turn}_a"
        if turn in fact_turns:
            templates = FACTS_ZH if lang == "zh" else FACTS_EN
            while True:
                k, site = rng.randrange(len(templates)), rng.choice(sites)
                if (site, k) not in used:
                    used.add((site, k))
                    break
            fact_t, question_t, value = templates[k]
            fact = fact_t.format(site=site, n=value(rng))
            planted.append(Planted(hid, fact, question_t.format(site=site), lang, turn))
            reply = "好的，已记录。" if lang == "zh" else "Got it, noted."
            messages += [
                HumanMessage(fact, id=hid, additional_kwargs=_kw(t)),
                AIMessage(reply, id=aid, additional_kwargs=_kw(t + timedelta(seconds=20))),
            ]
            continue
        if turn % 7 == 3:
            call = f"call_{turn}"
            size = 9000 if turn % 70 == 3 else 40
            rows = "\n".join(f"{m},{rng.randint(5000, 20000)}" for m in range(size // 10))
            ask = (
                f"读取{rng.choice(sites)}的电量数据"
                if lang == "zh"
                else f"Load the meter data for {rng.choice(sites)}"
            )
            messages += [
                HumanMessage(ask, id=hid, additional_kwargs=_kw(t)),
                AIMessage(
                    "",
                    id=f"t{turn}_c",
                    tool_calls=[{"name": "read_meter", "args": {"rows": size}, "id": call}],
                    additional_kwargs=_kw(t + timedelta(seconds=5)),
                ),
                ToolMessage(
                    "month,kwh\n" + rows,
                    id=f"t{turn}_r",
                    tool_call_id=call,
                    name="read_meter",
                    additional_kwargs=_kw(t + timedelta(seconds=6)),
                ),
                AIMessage(
                    "数据已读取。" if lang == "zh" else "Meter data loaded.",
                    id=aid,
                    additional_kwargs=_kw(t + timedelta(seconds=30)),
                ),
            ]
            continue
        q, a = rng.choice(FILLER_ZH if lang == "zh" else FILLER_EN)
        site = rng.choice(sites)
        messages += [
            HumanMessage(q.format(site=site), id=hid, additional_kwargs=_kw(t)),
            AIMessage(a.format(site=site), id=aid, additional_kwargs=_kw(t + timedelta(seconds=20))),
        ]
    return messages, planted
