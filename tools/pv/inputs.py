"""Free text in Chinese or English → PV calculation fields ("装机容量500kW", "tariff 0.8 yuan/kWh").

English is first rewritten into the Chinese vocabulary the rules read (`_ENGLISH`: a glossary
of the domain's terms, units and comparison words — "self-consumption" → 自发自用, "yuan/W" →
元/w, "1.5 million" → 150万, "at least" → 不低于), so one set of rules serves both languages.
Every number is converted to one canonical unit here (kW, 元/W, 元/kWh, ratios 0–1, kWh); a
number whose unit is missing or ambiguous is kept under an `*_unitless` key so validation asks
about it instead of guessing. Negative numbers are kept (validation names them back). Numbers
written in Chinese characters (五百千瓦) are not read.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tools.pv.data import find_locations, locations, unknown_place

__all__ = [
    "EXCLUSIVE_GROUPS",
    "apply_changes",
    "merge_fields",
    "normalize",
    "parse_fields",
    "parse_with_rest",
]

_N = r"((?:(?<![\d.])-)?\d+(?:\.\d+)?)"
# Between a field's name and its value: copulas, "about", and the verbs of a change ("降到").
_LINK = (
    r"[为是:约\s=都]|降到|降至|降为|降低到|下降到|提高到|提高至|提到|涨到|升到|上涨到|改为|改成|改到|调到|"
    r"调整为|调整到|变成|换成|变为|只有|仅有|要是|若为|假如|假设|设为|按|到|大概|大约|差不多|将近|接近|估计|大致|左右"
)
# Any other short wording between a name and its value is a verb or adverb of saying so ("造价只要3块",
# "运营期改30年", "电价取0.7", "折现率用8%", "电费其实是0.9"): up to three Chinese characters that
# neither ask (多少, 最高, 至少: a target's question), nor vary (变动, 浮动: a sensitivity's range), nor
# compare ("每…", "各…"), nor name another field (电价, 容量…).
_FREE = (
    r"(?:(?!多|几|最|至|起码|才|能让|变|动|浮|波|上下|增减|各|每|比|和|与|及|或|电|价|费|量|率|容|装|造|期)"
    r"[\u4e00-\u9fff]){1,3}"
)
_S = rf"(?:{_LINK})*(?:{_FREE}(?:{_LINK})*)?"
_PRICE_UNIT = r"(元/度|元/kwh|元/千瓦时|元/mwh|元/兆瓦时|分/度|分/kwh|分|元)?"
_PRICE_SCALE = {"元/mwh": 0.001, "元/兆瓦时": 0.001, "分/度": 0.01, "分/kwh": 0.01, "分": 0.01}
_REUSE = re.compile(
    r"其[他它余]参数不变|参数不变|沿用|重新测算|重新计算|再算一次|再测算|同样的参数|相同的?参数|上次的参数|之前的参数|保持不变"
)
# Building and owner words that say which kind of project it is.
_CI_WORDS = (
    "工商业|工业(?!园)|商业|厂房|厂区|工厂|企业|公司|仓库|物流|园区|商场|超市|酒店|宾馆|写字楼|办公楼|车间|制造|"
    "学校|医院|农场|养殖场|大棚|加油站|停车场|车棚|数据中心|冷库|机关|(?<!电)厂(?![家商])"
)
_HOUSEHOLD_WORDS = (
    "户用|居民|家庭|家用|自家|我家|家里|老家|农户|住宅|自建房|农村|别墅|民房|屋主|平房|"
    "自己家|咱家|俺家|我们家|房子|自住"
)
_CHANGE = re.compile(r"更换到|更换为|换到|换成|改为|改成|改到|变更为|调整为|搬到")
_PLACE = re.compile(
    r"(?:地点|地址|位置|位于|项目地|所在地|城市|更换到|更换为|换到|换成|改为|改成|改到)[是为在:\s]*([\u4e00-\u9fff]{2,10}?(?:省|市|区|县|州|旗))"
)

# Keys that describe the same quantity; a newer one replaces the older ones when merging.
EXCLUSIVE_GROUPS: tuple[tuple[str, ...], ...] = (
    ("location", "location_unknown"),
    ("capacity_kw", "capacity_unitless", "roof_area_m2"),
    ("capex_yuan_per_w", "capex_total_yuan", "capex_unitless"),
    ("om_yuan_per_w_year", "om_total_yuan_per_year"),
)


# An amount with its unit, as the English rules leave it ("10%", "0.3元/w", "500 kw").
_AMOUNT = r"\d+(?:\.\d+)?\s*(?:%|kwp?|mwp?|元(?:/[a-z]+)?|分)?"


def _scaled(factor: float, unit: str) -> Callable[[re.Match], str]:
    return lambda m: f"{float(m[1]) * factor:g}{unit}"


# English → the Chinese vocabulary of the rules, applied in order to lower-cased text.
_ENGLISH: tuple[tuple[str, str | Callable[[re.Match], str]], ...] = (
    (r"[’`´]", "'"),
    (r"(\d)\s*(?:percent|per cent|pct)\b", r"\1%"),
    # a hedge before an amount ("about 2.4 million kWh", "roughly 60%") is the rules' 约
    (
        r"\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|some|circa|close to)\s+(?=[\d-])",
        "约",
    ),
    (r"\b(?:only|just|merely)\s+(?=[\d-])", ""),  # "were only 60%": the value
    (r"\b(?:minus|negative)\s*(?=\d)", "-"),  # "capex minus 2 yuan": a negative number, named back
    (r"(\d+(?:\.\d+)?)\s*billion\b", _scaled(10, "亿")),
    (r"(\d+(?:\.\d+)?)\s*million\b", _scaled(100, "万")),
    (r"(\d+(?:\.\d+)?)\s*(?:thousand\b|k\b(?!\s*w))", _scaled(1000, "")),
    (r"\b(?:yuan|rmb|cny|renminbi)\b|¥", "元"),
    (r"元\s*((?:-)?\d+(?:\.\d+)?)", r"\1元"),  # "RMB 3.1/W" → "3.1元/W"
    (r"\bcents?\b|\bfen\b", "分"),
    # doubling or halving the size ("double the size", "halve the capacity", "twice as big")
    (
        r"\bdouble (?:the |its |our )?(?:system |plant |array )?(?:size|capacity)\b|\btwice as (?:big|large)\b",
        "装机容量翻倍",
    ),
    (
        r"\bhalve (?:the |its |our )?(?:system |plant |array )?(?:size|capacity)\b|\bhalf (?:the|as) (?:size|big|large)\b",
        "装机容量减半",
    ),
    (r"\bkilowatt[- ]?hours?\b|\bkw[- ]?h\b|\bunits? of electricity\b", "kwh"),
    # a price "a unit" / "per unit" is per kWh (the unit of a power bill); not "unit cost"
    (
        r"(元|分)\s*(?:/|\bper\b|\ban?\b|\beach\b|\bfor (?:one|a|each)\b)\s*units?\b(?!\s*(?:cost|price))",
        r"\1/kwh",
    ),
    (r"\bmegawatt[- ]?hours?\b", "mwh"),
    (r"(\d+(?:\.\d+)?)\s*(?:gigawatt[- ]?hours?|gwh)\b", _scaled(100, "万kwh")),  # 1 GWh = 100万 kWh
    (r"\bkilowatts?(?:[- ]peak)?\b", "kw"),
    (r"\bmegawatts?(?:[- ]peak)?\b", "mw"),
    (r"\bwatts?(?:[- ]peak)?\b", "w"),
    (r"\b(?:square met(?:er|re)s?|sq\.? ?m|sqm)\b", "平方米"),
    (r"\s*(?:/|\bper\b|\ban?\b|\beach\b)\s*(kwh|kwp|kw|mwh|mw|wp|w)\b", r"/\1"),
    (r"\s*(?:/|\bper\b|\ban?\b|\beach\b)\s*(?:year|yr|annum)\b", "/年"),
    (r"\b(\d+)\s*[- ]?(?:years?|yrs?)\b", r"\1年"),
    (
        r"\b(?:within|under|below|less than|no more than|not more than|at most|not exceeding|<=|≤)\s*",
        "不超过",
    ),
    (r"\b(?:at least|no less than|not less than|minimum of|above|>=|≥)\s*", "不低于"),
    (r"\bpayback(?: period| time)?\b|\bpay[- ]?back period\b", "回收期"),
    (r"\bpays? (?:itself |for itself )?back\b|\bbreak(?:s|ing)?[- ]?even\b|\bpays? off\b", "回本"),
    (r"\binternal rate of return\b", "irr"),
    (r"\bnet present value\b", "npv"),
    (
        r"\b(?:all|the whole|every kwh of)(?: (?:of )?(?:the |its |our )?(?:power|electricity|energy|output|generation))? (?:is |are |gets |goes |being )?(?:sold|exported|fed) (?:in)?to the grid"
        r"|\b(?:export(?:ing|s)?|sell(?:ing|s)?) (?:all|everything)(?: (?:of )?(?:the |their |its |my )?(?:power|electricity|energy|output))?(?: to the grid)?|\bfull(?:[- ]grid)? (?:export|feed[- ]in)\b",
        "全额上网",
    ),
    (
        r"\b(?:full|complete|total) self[- ]?(?:consumption|use)\b|\bself[- ]?consum(?:e|es|ing) (?:all|everything)\b"
        # "we used all of the power ourselves", "all the output is consumed on site"
        r"|\b(?:us(?:e|es|ed|ing)|consum(?:e|es|ed|ing))\s+(?:all|everything|every kwh)(?:\s+of)?(?:\s+(?:the|it|its|our|their))?"
        r"(?:\s+(?:power|output|electricity|energy|generation|solar))?\s+(?:ourselves|myself|themselves|on[- ]?site|locally|in[- ]house)\b"
        r"|\ball (?:of )?(?:the |its |our )?(?:power|output|electricity|energy|generation) (?:is |gets |would be |will be |were )?"
        r"(?:self[- ]?)?(?:consumed|used) (?:on[- ]?site|ourselves|locally|in[- ]house|by us)\b",
        "全部自用",
    ),
    # the verb forms: "self-consume 90%", "consumes 85% of the solar", "use only 40% of the power ourselves",
    # "70% of the output is used on site": a share of the output used on site (a load is in kWh, not %)
    (
        r"\bself[- ]?consum(?:e|es|ed|ing)\s+(?:only\s+|just\s+|up to\s+|约\s*)?(\d+(?:\.\d+)?)\s*%"
        # other verbs only with what is used ("use 8% discount rate" is no share of the output)
        r"|\b(?:consum(?:e|es|ed|ing)|us(?:e|es|ed|ing)|absorb(?:s|ed|ing)?)\s+(?:only\s+|just\s+|up to\s+|约\s*)?"
        r"(\d+(?:\.\d+)?)\s*%\s+of\s+(?:the\s+|its\s+|our\s+|their\s+)?(?:power|output|electricity|energy|generation|solar|pv|it)\b",
        lambda m: f"自发自用{m[1] or m[2]}%",
    ),
    (
        r"(\d+(?:\.\d+)?)\s*%\s+(?:of\s+(?:the\s+|it\s*|its\s+|our\s+|their\s+)?(?:power|output|electricity|energy|"
        r"generation|solar|pv)?\s*)?(?:is\s+|gets\s+|would be\s+|will be\s+|can be\s+)?(?:self[- ]?)?(?:consumed|used)"
        r"\s+(?:on[- ]?site|ourselves|locally|by us|in[- ]house|directly|by the (?:site|factory|plant|building))",
        r"自发自用\1%",
    ),
    (
        r"\bself[- ]?(?:consumption|consumed|use|used)(?: (?:ratio|rate|share|percentage|level))?\b|\bon[- ]site (?:consumption|use)\b"
        r"|\bself[- ]?consum(?:e|es|ing)\b|\b(?:use|consume)\s+(?:it\s+|them\s+)?(?:ourselves|myself|on[- ]site|locally|in[- ]house)\b",
        "自发自用",
    ),
    (
        r"\b(?:feed[- ]in|export|grid[- ]export|on[- ]grid|selling|sale) (?:tariff|price|rate)\b|\bfit\b",
        "上网电价",
    ),
    (
        r"\b(?:electricity|power|retail|grid|purchase|purchased|utility) (?:price|tariff|rate|cost)s?\b|\bprice of (?:electricity|power)\b|\btariffs?\b",
        "电价",
    ),
    (r"\bdiscount(?:ing)? rate\b|\bwacc\b|\bcost of capital\b|\bhurdle rate\b", "折现率"),
    (
        r"\b(?:annual|yearly|per year|a year) (?:electricity |power |energy )?(?:consumption|load|demand|usage|use)\b|\b(?:consumption|load|usage|demand) (?:per|a|each) year\b",
        "年用电量",
    ),
    (
        r"\b(?:uses?|using|consumes?|consuming)\s+(?:约\s*)?([\d.]+\s*(?:万|亿)?\s*(?:kwh|mwh))\s*(?:/年|a year|per year|each year|annually)",
        r"年用电量\1",
    ),
    (r"\b(?:o&m|operation and maintenance|maintenance) (?:cost|costs|fee|fees)?\b", "运维"),
    (r"\b(?:total (?:investment|capex|cost)|investment in total|overall (?:investment|cost))\b", "总投资"),
    (
        r"\b(?:capex|capital cost|investment cost|construction cost|installed cost|system cost|epc (?:price|cost)|cost per watt|price per watt|unit cost|costs?)\b(?: per watt| per w)?"
        r"|\b(?:price|cost)/wp?\b",
        "造价",
    ),
    (r"\b(?:installed capacity|system size|capacity|plant size|array size)\b", "装机容量"),
    (r"\b(?:specific yield|full[- ]load hours|equivalent hours|peak sun hours)\b", "年等效利用小时数"),
    (r"\b(?:first[- ]year degradation)\b", "首年衰减"),
    (r"\b(?:annual|yearly|linear) degradation\b", "逐年衰减"),
    (
        r"\b(?:project |operating |operation |service |economic )?(?:lifetime|life ?span|life|lifecycle|operating period|operation period|project period|horizon)\b",
        "运营期",
    ),
    (r"(?:^|(?<=[,;:，；]))\s*(\d+)年(?=\s*(?:[.,;，。；]|$))", r" 运营期\1年"),  # ", 25 years."
    (r"(\d+)年\s*(?:period|term)\b", r"运营期\1年"),  # "a 30-year period", "a 20-year term"
    (
        r"\b(?:commercial|industrial|c ?& ?i|c and i|factory|factories|warehouse|plant|business|company|"
        r"enterprise|office|mall|hotel|logistics|workshop|manufactur\w*|school|hospital|farm|shop|store|"
        r"supermarket|data cent(?:er|re)|cold storage|carport|parking)\b",
        " 工商业 ",
    ),
    (
        r"\b(?:residential|household|home|house|domestic|villa|homeowner|my roof|family|apartment|"
        r"bungalow|cottage|townhouse)\b",
        " 户用 ",
    ),
    (r"\b(?:change (?:it )?to|switch (?:it )?to|make it|move (?:it )?to|instead of|replace with)\b", "换成"),
    # a change by an amount ("cut the cost by 0.3", "the tariff rises by 5%", "capex 10% lower")
    (
        r"\b(?:cut|reduce|lower|decrease|bring down)\s+(?:the\s+)?([a-z\u4e00-\u9fff&/ -]{2,30}?)\s+by\b",
        r"\1 降低",
    ),
    (r"\b(?:raise|increase|lift)\s+(?:the\s+)?([a-z\u4e00-\u9fff&/ -]{2,30}?)\s+by\b", r"\1 提高"),
    (
        r"\b(?:drop(?:s|ped)?|fall(?:s|en)?|fell|(?:goes|go|went|comes?|came) down|decrease[sd]?|"
        r"reduced?|(?:is |was )?cut|lowered|shrinks?|shrank)(?:\s+by\b|(?=\s+约?\s*[\d-]))",
        "降低",
    ),
    (
        r"\b(?:rises?|risen|rose|(?:goes|go|went|comes?|came) up|increase[sd]?|raised|grows?|grew)(?:\s+by\b|(?=\s+约?\s*[\d-]))",
        "提高",
    ),
    # "a 10% cheaper system": the system's cost
    (
        rf"({_AMOUNT})\s*cheaper\s+(?:pv\s+|solar\s+)?(?:system|installation|plant|array|panels|modules|equipment|build)\b",
        r"造价降低\1",
    ),
    (rf"({_AMOUNT})\s*(?:lower|cheaper|less|smaller)\b", r"降低\1"),
    (rf"({_AMOUNT})\s*(?:higher|more|bigger|larger)\b", r"提高\1"),
    (
        r"\b(?:drops?|dropped|falls?|fell|(?:goes|go|went|comes?|came) (?:up|down)|rises?|rose|increase[sd]?|"
        r"decrease[sd]?|changes?|changed|is changed|were|was|becomes?|became|set|is|are|of|at|"
        r"reach(?:es|ed|ing)?|hit|get|gets|achieve[sd]?|target(?:ing)?)\b\s*(?:to\b)?",
        " ",
    ),
    # a superlative of size applied to the plant names its capacity ("the largest PV system", "the
    # biggest array we can put up", "the smallest installation that …")
    (
        r"\b(?:largest|biggest|maximum|max)\s+(?:possible\s+)?(?:(?:pv|solar|rooftop)\s+)*(?:system|plant|array|installation)s?\b",
        "最大装机容量",
    ),
    (
        r"\b(?:smallest|minimum|min)\s+(?:possible\s+)?(?:(?:pv|solar|rooftop)\s+)*(?:system|plant|array|installation)s?\b",
        "最小装机容量",
    ),
    (r"\b(?:optimal|optimum|ideal|best|right)\b", "最佳"),
    (r"\b(?:highest|maximum|max|most|upper limit)\b", "最高"),
    (r"\b(?:lowest|minimum|min|least|lower limit)\b", "最低"),
    (r"\b(?:largest|biggest)\b", "最大"),
    # the size as the unknown: "how big a system", "what size", "how many kilowatts"
    (
        r"\bhow (?:big|large)(?: an?| of an?| the)?(?: (?:pv|solar|rooftop))*(?: (?:system|plant|array|installation))?\b"
        r"|\bwhat size\b|\bhow many (?:kw|mw|kwp|panels)\b",
        "装多大",
    ),
    (r"\bhow (?:much|many|high|low|big|large|small|cheap)\b|\bwhat(?:'s)?\b|\bwhich\b", "多少"),
    (
        r"\b(?:solve for|back[- ]?calculate|back[- ]?solve|work out|reverse[- ]?(?:engineer|calculate|solve)?|optimi[sz]e|find)\b",
        "反推",
    ),
    # a value before its name: "try 0.7 for the tariff", "use 8% as the discount rate"
    (
        rf"({_AMOUNT}|\d+年)\s+(?:for|as)\s+(?:the\s+|our\s+|a\s+)?(上网电价|电价|造价|折现率|自发自用|运营期|装机容量|年用电量)",
        r"\2 \1",
    ),
    # "change the discount rate to 6%": the rules read 到 between a name and its value
    (r"\b(?:(?:up|down) )?to\b", "到"),
)
_ENGLISH_COMPILED = tuple((re.compile(p), r) for p, r in _ENGLISH)

_ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_RUN = "[零〇一二两三四五六七八九十百千]+(?:点[零〇一二三四五六七八九]+)?"
# A Chinese numeral counts only before a unit (or after 块/毛: "三块五", "八毛五") or after 百分之: "一下",
# "一个", "一点" stay words. 千 of 千瓦 is the unit's, not the number's (the run backs off it).
_ZH_NUMBER = re.compile(
    rf"百分之(?P<pct>{_ZH_RUN})|(?<=[块毛])(?P<tail>[一二三四五六七八九])(?![十百千])|"
    # a numeral with an order (十, 百, 千) ending a clause: "每千瓦造价三千三", "年限二十"
    r"(?P<bare>[一二两三四五六七八九十][零〇一二两三四五六七八九十百千]*[十百千][一二三四五六七八九]?)"
    r"(?=\s*(?:[，。,;；!！?？、]|$))|"
    rf"(?<![\d.零〇一二两三四五六七八九])(?P<run>{_ZH_RUN})(?!分[之点])(?=\s*(?:个\s*[亿万]|个半|折|千瓦|兆瓦|kw|mw|万|亿|元|块|毛|分|度|年|%|成|个百分点|平方|平米|小时))"
)


def _zh_integer(text: str) -> int | None:
    """A Chinese integer: 一千二百 → 1200, 两千 → 2000, 一千二 → 1200 (a last digit is one order below)."""
    if all(c in _ZH_DIGITS for c in text):  # digit by digit: "二五" → 25
        return int("".join(str(_ZH_DIGITS[c]) for c in text)) if text else None
    total, digit, last_unit, zero = 0, None, 1, False
    for c in text:
        if c in _ZH_DIGITS:
            digit, zero = _ZH_DIGITS[c], zero or _ZH_DIGITS[c] == 0
        else:
            unit = _ZH_UNITS[c]
            total += (1 if digit is None else digit) * unit
            digit, last_unit, zero = None, unit, False
    if digit is not None:  # "一百零五" = 105, "一千二" = 1200
        total += digit * (1 if zero or last_unit < 100 else last_unit // 10)
    return total


def _zh_number(m: re.Match) -> str:
    text = m["tail"] or m["pct"] or m["bare"] or m["run"]
    whole, _, fraction = text.partition("点")
    number = _zh_integer(whole) if whole else 0
    if number is None:
        return m[0]
    shown = f"{number}." + "".join(str(_ZH_DIGITS[c]) for c in fraction) if fraction else str(number)
    return shown + "%" if m["pct"] else shown


_EN_NUMBERS = {
    **{
        w: i
        for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
    },
    **{"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "a": 1, "an": 1},
}
# "two megawatts", "five hundred kilowatts", "a megawatt", "twenty years" → digits
_EN_NUMBER = re.compile(
    r"\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty)(?:[ -](one|two|three|four|five|six|seven|eight|nine))?(?: (hundred|thousand))?"
    r"(?= (?:kilowatts?|megawatts?|kw|mw|kwp|mwp|years?|million|yuan|percent|cents?)\b)"
    r"|(?<!half )\b(a|an)(?= (?:kilowatts?|megawatts?)\b)"  # "a year" stays words
)
# "two and a half megawatts" / "2 and a half MW" → 2.5, "half a megawatt" → 0.5, "one and a half million" → 1.5
_EN_HALF = re.compile(
    r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|an) and a half(?= (?:kilowatts?|megawatts?|kw|mw|"
    r"kwp|mwp|years?|million|yuan|percent|cents?)\b)|\bhalf an? (?=kilowatt|megawatt|million)"
)


_DIGIT_WORDS = "zero|one|two|three|four|five|six|seven|eight|nine"
# "one point two megawatts" → 1.2, "zero point six five yuan" → 0.65
_EN_POINT = re.compile(
    rf"\b(\d+|{_DIGIT_WORDS}|ten|eleven|twelve) point ((?:{_DIGIT_WORDS}|\d)(?:[ -](?:{_DIGIT_WORDS}))*)\b"
)


def _en_point(m: re.Match) -> str:
    whole = m[1] if m[1].isdigit() else str(_EN_NUMBERS[m[1]])
    digits = "".join(w if w.isdigit() else str(_EN_NUMBERS[w]) for w in re.split(r"[ -]", m[2]))
    return f"{whole}.{digits}"


# "一兆二" / "两兆五" (spoken 1.2 / 2.5 megawatts): 兆 stands for 兆瓦 with the tenths after it
_ZH_MEGA = re.compile(r"([一二两三四五六七八九\d])兆([一二三四五六七八九\d])(?![瓦\d千百万亿])")


def _zh_mega(m: re.Match) -> str:
    whole, tenth = (c if c.isdigit() else str(_ZH_DIGITS[c]) for c in (m[1], m[2]))
    return f"{whole}.{tenth}兆瓦"


def _en_half(m: re.Match) -> str:
    if m[1] is None:
        return "0.5 "
    whole = float(m[1]) if m[1].isdigit() else _EN_NUMBERS[m[1]]
    return f"{whole + 0.5:g}"


def _en_number(m: re.Match) -> str:
    if m[4]:  # "a megawatt"
        return f"{_EN_NUMBERS[m[4]]:g}"
    value = _EN_NUMBERS[m[1]] + (_EN_NUMBERS[m[2]] if m[2] else 0)
    value *= {"hundred": 100, "thousand": 1000}.get(m[3] or "", 1)
    return f"{value:g}"


# Everyday Chinese units → the written ones the rules read, applied in order to every text:
# "3块" (kuai) → 3元, "3块5" → 3.5元; "5毛3" (mao) → 0.53元; "0.6元一度" / "0.6元每度" → 0.6元/度; "每度电0.65元" /
# "电费一度0.65元" → 0.65元/度; "一瓦3元" → 每瓦3元; "1万千瓦" → 10000千瓦. Pieces ("3块板子") stay.
_CHINESE: tuple[tuple[str, str | Callable[[re.Match], str]], ...] = (
    (r"百分之(\d+(?:\.\d+)?)", r"\1%"),
    (r"(\d)\s*个\s*(亿|万)", r"\1\2"),  # "1个亿" = 1亿
    # "两个半兆瓦" = 2.5兆瓦, "半兆瓦" = 0.5兆瓦
    (r"(\d+)\s*个半\s*(?=兆瓦|千瓦|mw|kw|万|亿|小时|年)", lambda m: f"{int(m[1]) + 0.5:g}"),
    (r"(?<![\d一二三四五六七八九十两个大多])半\s*(?=兆瓦|mw)", "0.5"),
    (r"(\d+(?:\.\d+)?)\s*(?:gwh|吉瓦时)", _scaled(100, "万kwh")),
    (r"(\d+(?:\.\d+)?)\s*成(?![本功立为果交])", lambda m: f"{float(m[1]) * 10:g}%"),  # 七成 = 70%
    (r"(\d)\s*毛\s*(\d)?(?![\d.])(?:钱)?", lambda m: f"0.{m[1]}{m[2] or ''}元"),
    (r"(\d+)\s*块\s*(\d)(?![\d.])", r"\1.\2元"),
    (r"(\d+(?:\.\d+)?)\s*块(?:钱)?(?!\s*(?:板|组件|电池|光伏|屋顶|地|面|区|瓦片))", r"\1元"),
    (r"(元|分)\s*(?:一|每|1)\s*(?:度电?|千瓦时|kwh)(?![a-z])", r"\1/度"),
    (r"元\s*(?:一|每|1)\s*(?:瓦|wp?)(?![a-z])", "元/w"),
    (
        r"(?:每|一|1)\s*(?:度电?|千瓦时|kwh)(?:的)?(?:电价|电费|价格|价钱|电)?\s*(?:[为是:约要收合]|大概|大约)*"
        r"\s*(-?\d+(?:\.\d+)?)\s*元(?![/\d])",
        r"\1元/度",
    ),
    (r"(?:一|1)瓦", "每瓦"),
    (r"(\d+(?:\.\d+)?)\s*万\s*(千瓦|kwp?)(?![h时])", lambda m: f"{float(m[1]) * 1e4:g}{m[2]}"),
)
_CHINESE_COMPILED = tuple((re.compile(p), r) for p, r in _CHINESE)


# English words the rules read, kept as they are and used to correct a typo one letter away
# ("comercial", "calcualte", "Shenzen"); the places' spellings of the yield table join them.
_SPELLED = frozenset(
    "commercial residential industrial household calculate calculation capacity electricity consumption "
    "discount lifetime payback tariff sensitivity analysis report megawatt megawatts kilowatt kilowatts "
    "warehouse factory rooftop economics estimate evaluate investment feasibility".split()
)


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


@functools.lru_cache(maxsize=8)
def _known_words(table: tuple) -> frozenset[str]:
    return _SPELLED | {w for loc in table for name in loc.names_en for w in re.findall(r"[a-z]+", name)}


@functools.lru_cache(maxsize=4096)
def _corrected(word: str, known: frozenset[str]) -> str:
    if word in known:
        return word
    near = [k for k in known if abs(len(k) - len(word)) <= 1 and _one_edit(word, k)]
    return near[0] if len(near) == 1 else word


def _spelled(text: str) -> str:
    """Lower-case English `text` with words of six letters or more one edit from exactly one known word corrected.

    A clipped word ("resi", "comm.", "indus") is the one word of `_CLIPPABLE` it begins (four letters
    or more): people shorten the long words of the project type, not the short ones.
    """
    known = _known_words(locations())
    text = re.sub(r"(?<![a-z])[a-z]{4,}(?![a-z])", lambda m: _unclipped(m.group()), text)
    return re.sub(r"(?<![a-z])[a-z]{6,}(?![a-z])", lambda m: _corrected(m.group(), known), text)


# Long words of the project type that people clip ("resi 8kw", "comm rooftop").
_CLIPPABLE = ("residential", "commercial", "industrial", "household")


def _unclipped(word: str) -> str:
    whole = [w for w in _CLIPPABLE if w.startswith(word)]
    return whole[0] if len(whole) == 1 else word


# A number in scientific or hexadecimal notation, as a programmer or a spreadsheet writes it.
_SCIENTIFIC = re.compile(r"(?<![a-z0-9_.])(?:(\d+(?:\.\d+)?)e([+-]?\d{1,3})|0x([0-9a-f]{1,12}))(?![\d.])")


def _plain_number(m: re.Match) -> str:
    """The number of `_SCIENTIFIC` written out in decimals (a huge one stays huge: named back later)."""
    if m[3] is not None:
        return str(int(m[3], 16))
    return format(Decimal(f"{m[1]}e{m[2]}").normalize(), "f")


_SCRIPT_EDGE = re.compile(r"(?<=[\u4e00-\u9fff])(?=[a-z]{3})|(?<=[a-z]{3})(?=[\u4e00-\u9fff])")


def normalize(text: str) -> str:
    """NFKC (full-width → ASCII, ㎡ → m2), lower case, no thousands separators, English rewritten.

    Minus signs are unified, English terms are rewritten into the rules' vocabulary (`_ENGLISH`)
    and everyday Chinese units into written ones (`_CHINESE`).
    """
    text = unicodedata.normalize("NFKC", text).lower().replace("−", "-")
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    text = _SCIENTIFIC.sub(_plain_number, text)  # "1e3kw" is 1000 kW, not the 3 after the e
    text = re.sub(r"负\s*(?=\d)", "-", text)  # "电价负0.3元": a negative number, named back
    text = _ZH_MEGA.sub(_zh_mega, text)
    text = _ZH_NUMBER.sub(_zh_number, text)
    if re.search(r"[a-z]{2}", text):
        # an English word written against Chinese ("算一下suzhou的factory光伏") is a word of its own:
        # the English rules match whole words, and a Chinese character is a word character to them
        text = _SCRIPT_EDGE.sub(" ", text)
        text = _EN_POINT.sub(_en_point, _spelled(text))
        text = _EN_NUMBER.sub(_en_number, _EN_HALF.sub(_en_half, text))
        for pattern, repl in _ENGLISH_COMPILED:
            text = pattern.sub(repl, text)  # type: ignore[arg-type]
    for pattern, repl in _CHINESE_COMPILED:
        text = pattern.sub(repl, text)  # type: ignore[arg-type]
    return text


def _ratio(num: str, pct: str | None) -> float:
    value = float(num)
    return round(value / 100, 10) if pct or value > 1 else value


def _om(m: re.Match) -> dict[str, float]:
    value, unit = float(m[1]), m[2]
    if unit.startswith("元/k") or unit.startswith("元/千"):
        return {"om_yuan_per_w_year": value / 1000}
    if unit.startswith("元/"):
        return {"om_yuan_per_w_year": value}
    return {"om_total_yuan_per_year": value * (10_000 if unit.startswith("万") else 1)}


def _capex(m: re.Match) -> dict[str, float]:
    value, unit = float(m[1]), m[2]
    if unit.startswith("万元/"):
        return {"capex_yuan_per_w": value * 10_000 / 1_000_000}
    return {"capex_yuan_per_w": value / 1000 if ("k" in unit or "千" in unit) else value}


def _bare_yuan(m: re.Match) -> dict[str, float]:
    value = float(m[1])
    return {"capex_yuan_per_w": value} if 1 <= value <= 8 else {"capex_unitless": value}


def _load(m: re.Match) -> dict[str, float]:
    return _load_of(m[1], m[2] or "")


def _load_of(number: str, unit: str) -> dict[str, float]:
    scale = (
        1e8
        if unit.startswith("亿")
        else 1e4
        if unit.startswith("万")
        else 1e3
        if unit in ("mwh", "兆瓦时")
        else 1
    )
    return {"annual_load_kwh": float(number) * scale}


_ENERGY = "万度|万kwh|万千瓦时|亿度|亿kwh|亿千瓦时|度|kwh|千瓦时|mwh|兆瓦时"


# (pattern, handler) in order; each match is blanked so later rules cannot read it again.
_RULES: tuple[tuple[str, Callable[[re.Match], dict[str, Any]]], ...] = (
    (
        # The name, then any short wording without a number ("大概", "每年约", "is about").
        rf"(?:运维成本|运维费用|运维费|运营成本|运维)[^\d，。,;；\n]{{0,10}}?{_N}\s*(元/wp?|元/瓦|元/kwp?|元/千瓦|万元|万|元)(?:[·./\s]*年)?",
        _om,
    ),
    (
        # A per-watt amount per year is an O&M cost whatever it is called ("0.05元/W·年"), never capex.
        rf"{_N}\s*(元/wp?|元/瓦|元/kwp?|元/千瓦)\s*(?:[·./]|每|per)\s*(?:年|year|yr)",
        _om,
    ),
    (
        rf"(?:余电上网电价|上网电价|燃煤基准价|燃煤标杆电价|脱硫煤电价|标杆电价|基准电价){_S}{_N}\s*{_PRICE_UNIT}(?![\d.]*\s*%)",
        lambda m: {"feed_in_price": float(m[1]) * _PRICE_SCALE.get(m[2] or "", 1)},
    ),
    (
        rf"(?:电价|电费|用电价格|购电价格){_S}{_N}\s*{_PRICE_UNIT}(?![\d.]*\s*%)",
        lambda m: {"electricity_price": float(m[1]) * _PRICE_SCALE.get(m[2] or "", 1)},
    ),
    (
        rf"{_N}\s*(元/度|元/kwh|元/千瓦时|分/度|分/kwh)",
        lambda m: {"electricity_price": float(m[1]) * _PRICE_SCALE.get(m[2], 1)},
    ),
    (
        rf"(?:项目总投资|总投资|总造价|投资总额|总成本){_S}{_N}\s*(亿元|亿|万元|万|元)",
        lambda m: {"capex_total_yuan": float(m[1]) * {"亿": 1e8, "万": 1e4}.get(m[2][0], 1)},
    ),
    (rf"{_N}\s*(元/wp|元/w|元/瓦|元每瓦|元/kwp|元/kw|元/千瓦|万元/mwp|万元/mw|万元/兆瓦)(?![h时])", _capex),
    (rf"(?:每|单)瓦{_S}{_N}\s*元", lambda m: {"capex_yuan_per_w": float(m[1])}),
    # a cost per kW or per W in words: "每千瓦造价3300元", "造价每千瓦3300", "cost per kW 2,900 yuan"
    (
        rf"(?:每|/)\s*(千瓦|kwp?|瓦|wp?)(?![h时])\s*的?(?:造价|成本|投资|单价|价格){_S}{_N}\s*元?(?![/\d.])",
        lambda m: {"capex_yuan_per_w": float(m[2]) / (1000 if m[1][0] in "千k" else 1)},
    ),
    (
        rf"(?:造价|成本|投资|单价)\s*(?:每|/)\s*(千瓦|kwp?|瓦|wp?)(?![h时]){_S}{_N}\s*元?(?![/\d.])",
        lambda m: {"capex_yuan_per_w": float(m[2]) / (1000 if m[1][0] in "千k" else 1)},
    ),
    (
        rf"(?:单瓦造价|单瓦成本|单瓦投资|每瓦造价|每瓦成本){_S}{_N}\s*元(?![/每\d])",
        lambda m: {"capex_yuan_per_w": float(m[1])},
    ),
    (
        rf"(?:单瓦造价|单位造价|单瓦成本|单位投资|建设成本|epc|造价){_S}{_N}(?!\s*(?:[\d.%]|元|万|亿))",
        lambda m: {"capex_unitless": float(m[1])},
    ),
    # "造价3元": yuan without "/W" after a cost's name is per watt when it is a per-watt figure
    (rf"(?:单位造价|单位投资|建设成本|epc|造价){_S}{_N}\s*元(?![/每\d])", _bare_yuan),
    (
        rf"(?:年用电量|年用电|年耗电量|年均用电量){_S}{_N}\s*(万度|万kwh|万千瓦时|亿度|亿kwh|亿千瓦时|度|kwh|千瓦时|mwh|兆瓦时|万)?",
        _load,
    ),
    # the load as a verb of a year: "每年大概用电两百万度", "厂里一年要用400万度电", "用电量每年300万度"
    (
        rf"(?:年|全年)\s*(?:大概|大约|约|差不多|将近)?\s*(?:要|会|能|得)?\s*(?:用电量?|耗电量?|用掉?了?|耗掉?|消耗)"
        rf"{_S}{_N}\s*({_ENERGY})"
        rf"|(?:用电量?|耗电量?)\s*(?:每年|一年|1年|全年){_S}{_N}\s*({_ENERGY})",
        lambda m: _load_of(m[1] or m[3], m[2] or m[4]),
    ),
    (
        rf"(?:年?等效利用小时数?|年?利用小时数?|等效小时数?|满发小时数?|年发电小时数?){_S}{_N}",
        lambda m: {"specific_yield": float(m[1])},
    ),
    (rf"{_N}\s*kwh\s*/\s*kwp", lambda m: {"specific_yield": float(m[1])}),
    (
        rf"{_N}\s*(万)?\s*(平方米|平米|m2|平方)",
        lambda m: {"roof_area_m2": float(m[1]) * (1e4 if m[2] else 1)},
    ),
    (
        rf"{_N}\s*(mwp|mw|兆瓦|kwp|kw|千瓦)(?![h时])",
        lambda m: {"capacity_kw": float(m[1]) * (1 if m[2][0] in "k千" else 1000)},
    ),
    (
        rf"(?:装机容量|装机规模|装机|容量|规模){_S}{_N}(?!\s*[\d.%])",
        lambda m: {"capacity_unitless": float(m[1])},
    ),
    (
        rf"(?:自发自用比例|自发自用率|自发自用|自用比例|自用率|消纳比例|自用){_S}{_N}\s*(%)?",
        lambda m: {"self_consumption": _ratio(m[1], m[2])},
    ),
    (
        rf"{_N}\s*%\s*的?(?:自发自用比例|自发自用率|自发自用|自用比例|自用率|自用|消纳比例)",
        lambda m: {"self_consumption": _ratio(m[1], "%")},
    ),
    # the verb forms: "自己能用掉70%", "消纳80%", "70%的电自己用"
    (
        # an adverb between the owner and the verb ("自己只用一成", "自己就能用掉三成") leaves the verb as it is
        rf"(?:用掉|用了|消纳掉?|消耗掉|吃掉|自己\s*(?:只|仅|就|能|可以|大概|大约|约)*\s*用)\s*(?:了|掉)?\s*(?:约|大概|大约)?\s*{_N}\s*%",
        lambda m: {"self_consumption": _ratio(m[1], "%")},
    ),
    (
        rf"{_N}\s*%\s*(?:的(?:电量?|发电量?|光伏电))?\s*(?:都|能|可以|会)?\s*(?:自己|自家|厂里|厂区|我们|家里)\s*(?:能|可以|会)?\s*(?:用掉|用|消纳)",
        lambda m: {"self_consumption": _ratio(m[1], "%")},
    ),
    (r"全额上网", lambda m: {"self_consumption": 0.0}),
    (r"全部自用|全额自用|完全自用", lambda m: {"self_consumption": 1.0}),
    # all of it used by the owner ("发的电全部自己用掉", "电都自己用了", "自己全部消纳"): 100 %
    (
        r"(?:(?:全部|全都|都|全)\s*(?:能|可以|会|被)?\s*(?:自己|自家|厂里|厂区|我们|家里)"
        r"|(?:自己|自家|厂里|厂区|我们|家里)\s*(?:能|可以|会)?\s*(?:全部|全都|都|全))"
        # the verb ends the phrase: not "我们都用光伏", "自己都用不完"
        r"\s*(?:能|可以|会)?\s*(?:用|消纳)(?:掉|了|完)*(?=\s*(?:呢|吧|啊|的话|[，。,;；!！?？]|$))",
        lambda m: {"self_consumption": 1.0},
    ),
    # all of it sold ("电全部卖给电网", "都卖掉"): full export
    (r"(?:全部|全都|都|全)\s*(?:卖给电网|卖给国家|卖掉|卖了|上网)", lambda m: _sold_all(m)),
    (rf"首年(?:组件)?衰减率?{_S}{_N}\s*(%)?", lambda m: {"first_year_degradation": _ratio(m[1], m[2])}),
    (
        rf"(?:逐年|年均|每年|线性|年)衰减率?{_S}{_N}\s*(%)?",
        lambda m: {"annual_degradation": _ratio(m[1], m[2])},
    ),
    (
        rf"(?<!回收)(?:运营期|运营年限|运行期|运行年限|寿命|使用年限|测算年限|测算期|项目周期|周期|年限|运营|运行){_S}{_N}\s*年",
        lambda m: {"lifetime_years": float(m[1])},
    ),
    (rf"{_N}\s*年\s*(?:的)?(?:运营期|寿命|测算期)", lambda m: {"lifetime_years": float(m[1])}),
    (
        rf"(?:折现率|贴现率|基准收益率|资金成本|资本成本){_S}{_N}\s*(%)?",
        lambda m: {"discount_rate": _ratio(m[1], m[2])},
    ),
    (rf"{_N}\s*%\s*的?(?:折现率|贴现率)", lambda m: {"discount_rate": _ratio(m[1], "%")}),
)
_COMPILED = tuple((re.compile(p), h) for p, h in _RULES)

# The remainder as a subject ("其余都上网", "剩下的电全部卖给电网"): what is left after self-use is sold.
_THE_REST = re.compile(r"其余|剩下|剩余|余下|多余|其他|其它")


def _sold_all(m: re.Match) -> dict[str, Any]:
    """Full export (0 % self-consumption), unless what is sold is the rest of the output.

    "电都卖给电网" sells all of it; "自己用一成，其余都上网" sells what is left after self-use, which
    says nothing about the share (the clause before it does).
    """
    clause = re.split(r"[，。,;；!！?？]", m.string[: m.start()])[-1]
    return {} if _THE_REST.search(clause) else {"self_consumption": 0.0}


# The types' own names (not building words: "我家的厂房" is a family's factory), a word refusing the
# one after it ("不是户用，是工商业"), and words offering a choice ("工商业还是户用？", "户用和工商业哪个划算").
_TYPE_NAMES = re.compile(r"工商业|工业|商业|户用|居民|家用")
_NOT_THIS = re.compile(r"(?:不是|并非|不属于|不算|而非|\bnot\b|\bisn't\b|\bno longer\b)\s*(?:一个|个)?\s*$")
_CHOICE = re.compile(
    r"还是|或者|或是|或|哪个|哪种|哪一|对比|比较|相比|区别|差别|\bor\b|\bvs\b|\bversus\b|\bcompar"
)


def _project_type(text: str) -> tuple[str | None, list[str]]:
    """The project type named in `text`, and the two types when the words name both without choosing.

    After a change word ("换成户用") the new one wins; a refused one ("不是户用，是工商业") does not
    count; a choice or comparison ("工商业还是户用？") keeps the first, as before. Both types' own
    names otherwise ("既是户用又是工商业") contradict each other: validation asks which one.
    """
    hits = [
        (
            m.start(),
            "工商业" if m.lastgroup == "ci" else "户用",
            bool(_TYPE_NAMES.fullmatch(m.group())),
        )
        for m in re.finditer(f"(?P<ci>{_CI_WORDS})|(?P<home>{_HOUSEHOLD_WORDS})", text)
    ]
    change = _CHANGE.search(text)
    after = [hit for hit in hits if change and hit[0] >= change.end()]
    if after:
        return min(after)[1], []
    kept = [hit for hit in hits if not _NOT_THIS.search(text[max(0, hit[0] - 8) : hit[0]])] or hits
    if not kept:
        return None, []
    named = {kind for _, kind, own in kept if own}
    if len(named) == 2 and len(kept) == len(hits) and not _CHOICE.search(text):
        return None, sorted(named, key=lambda kind: min(pos for pos, k, own in kept if k == kind and own))
    # a type's own name beats a building or owner word, which may be part of a name ("苏州工业园区的户用屋顶")
    return min(hit for hit in kept if hit[2] or not named)[1], []


def _location(text: str, raw: str = "", project: bool = True) -> dict[str, str]:
    known = find_locations(text)
    change = _CHANGE.search(text)
    after = [loc for pos, loc in known if change and pos >= change.end()]
    if after or (known and not change):
        return {"location": (after or [known[0][1]])[0].name}
    unknown = _PLACE.search(text)
    if unknown:
        return {"location_unknown": unknown[1]}
    # a place the tables do not hold ("火星 工商业 500kW", "换到拉萨", "in Lhasa") is named back, not
    # dropped — where the text speaks of a project (other values) or moves one ("what about Lhasa?");
    # "When is the next solar eclipse visible from China?" names a place of no project
    raw = unicodedata.normalize("NFKC", raw or text)
    if not (project or _MOVED.search(raw)):
        return {"location": known[0][1].name} if known else {}
    moved = _CHANGE.search(raw)
    named = unknown_place(raw, _PROJECT_WORDS, _not_a_place, moved.end() if known and moved else 0)
    if named:
        return {"location_unknown": named}
    return {"location": known[0][1].name} if known else {}


_MOVED = re.compile(
    rf"{_CHANGE.pattern}|换|改|搬|挪|\b(?:what about|how about|what if|instead|switch(?:ed)? to|move[sd]? to|relocat\w*)\b",
    re.I,
)
# What a request computes (a project's type, its building, the plant): a word right before it is
# where it stands ("拉萨的工商业项目"); a word that is itself a type or an owner is no place.
_PROJECT_WORDS = rf"{_CI_WORDS}|{_HOUSEHOLD_WORDS}|光伏|项目|电站|屋顶|分布式"


def _not_a_place(word: str) -> bool:
    plain = normalize(word)
    return bool(re.search(_PROJECT_WORDS, plain) or _project_type(plain)[0])


# Relative changes of a value ("造价再便宜0.4元/W", "电价涨5%", "容量翻倍", "cut the cost by 0.3"):
# the name, a verb of going down or up (not "降到": that states the new value), the amount.
_CHANGE_NAMES = {
    "上网电价": "feed_in_price",
    "燃煤基准价": "feed_in_price",
    "自用电价": "electricity_price",
    "电价": "electricity_price",
    "电费": "electricity_price",
    "单瓦造价": "capex_yuan_per_w",
    "单位造价": "capex_yuan_per_w",
    "单瓦成本": "capex_yuan_per_w",
    "造价": "capex_yuan_per_w",
    "成本": "capex_yuan_per_w",
    "投资": "capex_yuan_per_w",
    "装机容量": "capacity_kw",
    "装机规模": "capacity_kw",
    "装机": "capacity_kw",
    "容量": "capacity_kw",
    "规模": "capacity_kw",
    "自发自用比例": "self_consumption",
    "自发自用率": "self_consumption",
    "自发自用": "self_consumption",
    "自用比例": "self_consumption",
    "自用率": "self_consumption",
    "消纳比例": "self_consumption",
    "折现率": "discount_rate",
    "贴现率": "discount_rate",
    "运营期": "lifetime_years",
    "寿命": "lifetime_years",
}
_RATIOS = frozenset({"self_consumption", "discount_rate"})  # "提高10%" of a share: ten points
_NAMES = "|".join(sorted(_CHANGE_NAMES, key=len, reverse=True))
_DOWN = "降低|减少|下降|下调|便宜|缩小|缩减|降|少|减|低"
_UP = "提高|增加|上涨|上调|增长|增大|扩大|提升|涨|多|高|加|升"
_RELATIVE = re.compile(
    rf"({_NAMES})(?:/[a-z]+)?\s*(?:再|还|又|能|可以|如果|要是|若)*\s*(?:(?P<down>{_DOWN})|(?P<up>{_UP}))(?![到至为成于])"
    rf"\s*(?:了|个)?\s*(百分之)?{_N}\s*(%|个百分点|成|元/kwh|元/度|分/度|分|元/w|元/kw|元|mw|兆瓦|kw|千瓦|年)?"
)
# Without a name, the unit says which value changes ("再多500kW呢", "500 kW more").
_UNIT_FIELDS = {"mw": "capacity_kw", "兆瓦": "capacity_kw", "kw": "capacity_kw", "千瓦": "capacity_kw"}
_UNIT_FIELDS |= dict.fromkeys(("元/w", "元/kw"), "capex_yuan_per_w")
_UNIT_FIELDS |= dict.fromkeys(("元/kwh", "元/度", "分/度"), "electricity_price")
_UNNAMED = re.compile(
    r"(?<![\u4e00-\u9fff])(?:再|还|又)?\s*(?:(?P<down>降低|减少|少|降|便宜)|(?P<up>提高|增加|多|加))\s*(?:了|个)?"
    rf"\s*{_N}\s*(元/kwh|元/度|分/度|元/w|元/kw|mw|兆瓦|kw|千瓦)(?![h时])"
)
_HALF = "减半|减一半|砍半|砍一半|少一半|缩小一半|降一半|打对折|对半"
# "电价打九折" / "造价打个八五折": a discount, as a factor
_DISCOUNT = re.compile(rf"({_NAMES})\s*(?:再|还|又|能|可以|如果|要是)*\s*打\s*个?\s*(\d+(?:\.\d+)?)\s*折")
_FOLD = re.compile(rf"({_NAMES})\s*(?:再|还|又|能|可以)*\s*(翻倍|翻一番|加倍|增加一倍|扩大一倍|{_HALF})")


def _change(m: re.Match) -> tuple[str, tuple[str, float]]:
    """One relative change: (field, ("add", amount) or ("scale", factor)) in canonical units."""
    field = _CHANGE_NAMES[m[1]]
    sign = -1.0 if m["down"] else 1.0
    amount, unit = float(m[5]), m[6] or ""
    if m[4] or unit in ("%", "成"):
        share = amount / (10 if unit == "成" else 100)
        return (field, ("add", sign * share)) if field in _RATIOS else (field, ("scale", 1 + sign * share))
    if unit == "个百分点":
        return field, ("add", sign * amount / 100)
    scale = {"分": 0.01, "分/度": 0.01, "元/kw": 0.001, "mw": 1000.0, "兆瓦": 1000.0}.get(unit, 1.0)
    return field, ("add", sign * amount * scale)


def _changes(rest: str) -> tuple[dict[str, tuple[str, float]], str]:
    """Relative changes in normalized text (field → ("add", amount) | ("scale", factor)), text without them."""
    found: dict[str, tuple[str, float]] = {}
    for m in _RELATIVE.finditer(rest):
        name, change = _change(m)
        found.setdefault(name, change)
    for m in _DISCOUNT.finditer(rest):
        factor = float(m[2])
        found.setdefault(_CHANGE_NAMES[m[1]], ("scale", factor / 10 if factor < 10 else factor / 100))
    for m in _FOLD.finditer(rest):
        found.setdefault(_CHANGE_NAMES[m[1]], ("scale", 0.5 if re.fullmatch(_HALF, m[2]) else 2.0))
    rest = _RELATIVE.sub(lambda m: " " * len(m[0]), rest)
    for m in _UNNAMED.finditer(rest):
        scale = {"分/度": 0.01, "元/kw": 0.001, "mw": 1000.0, "兆瓦": 1000.0}.get(m[4], 1.0)
        found.setdefault(_UNIT_FIELDS[m[4]], ("add", (-1.0 if m["down"] else 1.0) * float(m[3]) * scale))
    for pattern in (_UNNAMED, _FOLD, _DISCOUNT):
        rest = pattern.sub(lambda m: " " * len(m[0]), rest)
    return found, rest


def apply_changes(fields: dict[str, Any], base: dict[str, Any]) -> tuple[dict[str, Any], dict[str, tuple]]:
    """`fields` with their relative `changes` applied to the `base` case's inputs.

    Returns the fields (without `changes`) and what changed: field → (old, new). A change whose
    field was also stated outright, or that the base case does not hold, is left out.
    """
    fields = dict(fields)
    changed: dict[str, tuple] = {}
    for name, (mode, amount) in (fields.pop("changes", None) or {}).items():
        old = base.get(name)
        if name in fields or not isinstance(old, int | float):
            continue
        new = round(old + amount if mode == "add" else old * amount, 6)
        fields[name] = int(round(new)) if name == "lifetime_years" else new
        changed[name] = (old, fields[name])
    return fields, changed


# Between two values of one field: the later one replaces the first ("从500kW改成1MW", "from 3 to 2.8").
_CHANGE_BETWEEN = re.compile(
    r"改成|改为|改到|换成|换为|变成|变为|调到|调整为|调整到|调成|降到|降至|降为|提高到|提到|涨到|升到|到|至|->|→|\bto\b|\binstead\b"
    # a speaker correcting themself: "500kW，哦不对，是300kW", "800 kW, sorry, I mean 600 kW"
    r"|不对|不是|错了|说错|更正|应该是|其实是|\bsorry\b|\bi mean\b|\bi meant\b|\bactually\b|\brather\b|\bcorrection\b"
)


def _differ(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int):
        return abs(a - b) > 1e-9 * max(1.0, abs(a))
    return a != b


def parse_with_rest(text: str) -> tuple[dict[str, Any], str]:
    """Fields found in `text`, and the normalized text with the parsed numbers blanked out.

    Relative changes ("造价再便宜0.4元/W") are kept under `changes` (see `apply_changes`). Two
    different values of one field are kept under `conflicts` (validation asks which one), unless
    a change word stands between them ("从500kW改成1MW": the later one).
    """
    rest = normalize(text)
    fields: dict[str, Any] = {}
    changes, rest = _changes(rest)
    if changes:
        fields["changes"] = changes
    seen: dict[str, tuple[int, Any]] = {}  # key → (end of its first value, that value)
    conflicts: dict[str, list[Any]] = {}
    for pattern, handler in _COMPILED:
        for m in pattern.finditer(rest):
            for key, value in handler(m).items():
                if key not in seen:
                    seen[key] = (m.end(), value)
                    fields[key] = value
                elif _differ(seen[key][1], value):
                    # "容量从500kW改成1MW": the value after a change word replaces the first
                    if _CHANGE_BETWEEN.search(rest[seen[key][0] : m.start()]):
                        fields[key] = value
                    else:
                        conflicts.setdefault(key, [seen[key][1]]).append(value)
        rest = pattern.sub(lambda m: " " * len(m[0]), rest)
    if conflicts:
        fields["conflicts"] = conflicts
    fields.update(_location(normalize(text), text, project=bool(fields)))
    ptype, both = _project_type(rest)
    if ptype:
        fields["project_type"] = ptype
    elif both:  # "既是户用又是工商业": asked which one, like two values of one number
        fields.setdefault("conflicts", {})["project_type"] = both
    if _REUSE.search(rest):
        fields["reuse_previous"] = True
    return fields, rest


def parse_fields(text: str) -> dict[str, Any]:
    """PV calculation fields stated in `text` (canonical units); see the module docstring."""
    return parse_with_rest(text)[0]


def merge_fields(older: dict[str, Any], newer: dict[str, Any]) -> dict[str, Any]:
    """`older` updated with `newer`, where a newer key also drops the older keys of its group.

    A conflict of `older` (two values of one field) is settled by a value of that field in `newer`.
    """
    merged = dict(older)
    for key in newer:
        for group in EXCLUSIVE_GROUPS:
            if key in group:
                for other in group:
                    merged.pop(other, None)
    conflicts = {k: v for k, v in (older.get("conflicts") or {}).items() if k not in newer}
    merged.update(newer)
    # a newer text that states a conflicting field settles it ("1MW" answering "500 kW or 1 MW?")
    conflicts.update(newer.get("conflicts") or {})
    merged.pop("conflicts", None)
    if conflicts:
        merged["conflicts"] = conflicts
    return merged
