"""Which language the user writes in ("zh" or "en"), so replies, questions and reports follow it.

Chinese is the product's default: a request counts as English only when its Latin words clearly
outweigh its Chinese characters (units, numbers and acronyms such as kW, IRR, NPV do not count).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["LANGUAGES", "detect_language", "pick"]

LANGUAGES = ("zh", "en")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[A-Za-z]{2,}")
_NEUTRAL = frozenset(
    "kw kwp mw mwp kwh mwh gwh irr npv lcoe pv epc om capex rmb cny yuan html pdf md ok".split()
)


def detect_language(texts: str | Iterable[str]) -> str:
    """English ("en") when Latin words outnumber Chinese characters / 1.5, else Chinese ("zh")."""
    text = texts if isinstance(texts, str) else " ".join(texts)
    cjk = len(_CJK.findall(text))
    words = sum(1 for w in _WORD.findall(text) if w.lower() not in _NEUTRAL)
    return "en" if words > cjk / 1.5 else "zh"


def pick(lang: str, zh: str, en: str) -> str:
    """`en` for an English conversation, else `zh`."""
    return en if lang == "en" else zh
