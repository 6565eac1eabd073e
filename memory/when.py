"""Time expressions in questions ("last week", "in May 2024", "去年五月", "三天前") as time spans.

`time_span(query, reference)` returns the `[start, end)` UTC epoch span the question points at,
relative to `reference` (the namespace's newest message, as for decay), or None. Search boosts
messages whose `created_at` falls inside it. Only unambiguous calendar phrases are read; a
question without one is unaffected.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["time_span"]

Span = tuple[float, float]

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        "jan january|feb february|mar march|apr april|may|jun june|jul july|aug august|"
        "sep sept september|oct october|nov november|dec december".split("|")
    )
    for m in names.split()
}
_EN_NUM = {
    w: i + 1 for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split())
}
_EN_NUM.update(a=1, an=1, couple=2, few=3, several=3)
_ZH_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2, "〇": 0}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30.44, "year": 365.25}
_ZH_UNIT = {
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "个月": "month",
    "月": "month",
    "年": "year",
}
_MONTH_WORD = "|".join(sorted(_MONTHS, key=len, reverse=True))
# Month names are whole words of Latin letters: also right beside Chinese ("在February 2025去了哪"),
# where a \b would see no word boundary between 在 and F.
_EN_MONTH = re.compile(
    rf"(?<![A-Za-z])(?:in|during|on|of|since|by)?\s*({_MONTH_WORD})(?![A-Za-z])\.?(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?(?!\d))?(?:,?\s+(\d{{4}}))?",
    re.I,
)
# "2025-06", "2024/11", "2024-11-03": a year and a month (and day) in digits.
_ISO_MONTH = re.compile(r"(?<!\d)((?:19|20)\d{2})[-/.](0?[1-9]|1[0-2])(?:[-/.](\d{1,2}))?(?!\d)")
_EN_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple|few|several)"
                     r"(?:\s+of)?\s+(day|week|month|year)s?\s+ago\b", re.I)  # fmt: skip
_EN_REL = re.compile(
    r"\b(yesterday|today|(?:last|past|previous)\s+(?:week|weekend|month|year)|this\s+(?:week|month|year))\b",
    re.I,
)
_EN_YEAR = re.compile(r"\b(?:in|during)\s+((?:19|20)\d{2})\b", re.I)
_ZH_NUM = r"[0-9零〇一二两三四五六七八九十]+"
_ZH_MONTH = re.compile(
    rf"(?:((?:19|20)\d{{2}})年|(去年|今年|前年))?({_ZH_NUM})月(?:份)?(?:({_ZH_NUM})[日号])?"
)
_ZH_AGO = re.compile(rf"({_ZH_NUM}|几|半)(个?)(天|日|周|星期|礼拜|月|年)(?:前|以前|之前)")
_ZH_REL = re.compile(
    r"(昨天|前天|今天|上周末|上个?周|上个?星期|上个?礼拜|本周|这周|这个?星期|上个月|这个月|本月|去年|今年|前年)"
)


def _zh_int(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text in ("几",):
        return 3
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_ZH_DIGIT.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGIT.get(ones, 0) if ones else 0)
    value = 0
    for ch in text:
        if ch not in _ZH_DIGIT:
            return None
        value = value * 10 + _ZH_DIGIT[ch]
    return value


def _month_span(year: int, month: int, day: int | None = None) -> Span | None:
    if not 1 <= month <= 12:
        return None
    if day is not None:
        try:
            start = datetime(year, month, day, tzinfo=UTC)
        except ValueError:
            return None
        return start.timestamp(), (start + timedelta(days=1)).timestamp()
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start.timestamp(), end.timestamp()


def _latest_year(now: datetime, month: int) -> int:
    """A month named without a year: the latest one not after `now`."""
    return now.year if month <= now.month else now.year - 1


def _day(now: datetime, back: int) -> Span:
    start = datetime(now.year, now.month, now.day, tzinfo=UTC) - timedelta(days=back)
    return start.timestamp(), (start + timedelta(days=1)).timestamp()


def _relative(word: str, now: datetime) -> Span | None:
    week_start = datetime(now.year, now.month, now.day, tzinfo=UTC) - timedelta(days=now.weekday())
    month_start = datetime(now.year, now.month, 1, tzinfo=UTC)
    last_month = (month_start - timedelta(days=1)).replace(day=1)
    year = datetime(now.year, 1, 1, tzinfo=UTC)
    table: dict[str, tuple[datetime, datetime]] = {
        "week": (week_start - timedelta(days=7), week_start),
        "weekend": (week_start - timedelta(days=2), week_start),
        "this week": (week_start, week_start + timedelta(days=7)),
        "month": (last_month, month_start),
        "this month": (month_start, now + timedelta(days=1)),
        "year": (year.replace(year=now.year - 1), year),
        "this year": (year, now + timedelta(days=1)),
        "2year": (year.replace(year=now.year - 2), year.replace(year=now.year - 1)),
    }
    if word in ("today", "今天"):
        return _day(now, 0)
    if word in ("yesterday", "昨天"):
        return _day(now, 1)
    if word == "前天":
        return _day(now, 2)
    key = {
        "上周末": "weekend", "本周": "this week", "这周": "this week", "上个月": "month", "这个月": "this month",
        "本月": "this month", "去年": "year", "今年": "this year", "前年": "2year",
    }.get(word)  # fmt: skip
    if key is None and word[0] == "上":
        key = "week"
    if key is None and word[0] == "这":
        key = "this week"
    if key is None:
        mode, _, unit = word.lower().partition(" ")
        key = unit if mode in ("last", "past", "previous") else f"this {unit}"
    start, end = table[key]
    return start.timestamp(), end.timestamp()


def _ago(amount: float, unit: str, now: datetime) -> Span:
    days = amount * _UNIT_DAYS[unit]
    slack = max(1.0, days * 0.35)  # "three weeks ago" is roughly, not exactly, 21 days
    return (now - timedelta(days=days + slack)).timestamp(), (now - timedelta(days=days - slack)).timestamp()


def time_span(query: str, reference: float) -> Span | None:
    """The span of time `query` points at, relative to `reference` (epoch seconds), or None."""
    if not reference:
        return None
    now = datetime.fromtimestamp(reference, UTC)
    if m := _ZH_MONTH.search(query):
        month, day = _zh_int(m.group(3)), _zh_int(m.group(4)) if m.group(4) else None
        if month is not None:
            rel = {"去年": now.year - 1, "今年": now.year, "前年": now.year - 2}.get(m.group(2) or "")
            year = int(m.group(1)) if m.group(1) else rel if rel is not None else _latest_year(now, month)
            if span := _month_span(year, month, day):
                return span
    if m := _ISO_MONTH.search(query):
        if span := _month_span(int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None):
            return span
    if m := _ZH_AGO.search(query):
        amount = 0.5 if m.group(1) == "半" else _zh_int(m.group(1))
        unit = _ZH_UNIT["个月" if m.group(3) == "月" else m.group(3)]
        if amount:
            return _ago(float(amount), unit, now)
    if m := _ZH_REL.search(query):
        return _relative(m.group(1), now)
    if m := _EN_MONTH.search(query):
        word = m.group(1).lower()
        if (
            word != "may"
            or m.group(2)
            or m.group(3)
            or re.search(r"\b(?:in|during|of|since|by)\s+may\b", query, re.I)
        ):
            month = _MONTHS[word]
            year = int(m.group(3)) if m.group(3) else _latest_year(now, month)
            if span := _month_span(year, month, int(m.group(2)) if m.group(2) else None):
                return span
    if m := _EN_AGO.search(query):
        raw = m.group(1).lower()
        amount = int(raw) if raw.isdigit() else _EN_NUM[raw]
        return _ago(float(amount), m.group(2).lower(), now)
    if m := _EN_REL.search(query):
        return _relative(" ".join(m.group(1).lower().split()), now)
    if m := _EN_YEAR.search(query):
        year = int(m.group(1))
        return datetime(year, 1, 1, tzinfo=UTC).timestamp(), datetime(year + 1, 1, 1, tzinfo=UTC).timestamp()
    return None
