"""Which language the user writes in ("zh" or "en"), so replies, questions and reports follow it.

Chinese is the product's default: a request counts as English only when its Latin words clearly
outweigh its Chinese characters (units, numbers and acronyms such as kW, IRR, NPV do not count).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["LANGUAGES", "detect_language", "has_language", "named_language", "neutral", "pick"]

LANGUAGES = ("zh", "en")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[A-Za-z]{2,}")
# A language named as the one to write in: "用英文", "写成中文", "in English", "English reports".
_NAMED = re.compile(
    r"(?:用|以|写成|换成|改用|改成|使用|采用|翻译成|译成)\s*(?P<zh1>中文|汉语|简体中文)|"
    r"(?:用|以|写成|换成|改用|改成|使用|采用|翻译成|译成)\s*(?P<en1>英文|英语)|"
    r"\b(?:in|into|use)\s+(?P<en2>english)\b|\b(?:in|into|use)\s+(?P<zh2>chinese|mandarin)\b|"
    r"\b(?P<en3>english)\s+(?:reports?|answers?|replies|only)\b|\b(?P<zh3>chinese)\s+(?:reports?|answers?|replies|only)\b",
    re.IGNORECASE,
)
_NEUTRAL = frozenset(
    "kw kwp mw mwp kwh mwh gwh irr npv lcoe pv epc om capex rmb cny yuan html pdf md ok".split()
)


def detect_language(texts: str | Iterable[str]) -> str:
    """English ("en") when Latin words outnumber Chinese characters / 1.5, else Chinese ("zh").

    A capitalised word inside a sentence is a name ("帮我算一下 Suzhou Industrial Park 的户用光伏"):
    names are borrowed into either language and say nothing about which one the user writes.
    """
    text = texts if isinstance(texts, str) else " ".join(texts)
    cjk = len(_CJK.findall(text))
    words = sum(
        1
        for m in _WORD.finditer(text)
        if m.group().lower() not in _NEUTRAL and not _is_name(text, m.start(), m.group())
    )
    return "en" if words > cjk / 1.5 else "zh"


def _is_name(text: str, start: int, word: str) -> bool:
    """A capitalised word (not all capitals: IRR is neutral already) that does not open a sentence."""
    if not (word[0].isupper() and not word.isupper()):
        return False
    before = text[:start].rstrip(" \t\"'“‘(")
    return bool(before) and before[-1] not in ".!?。！？\n:："


def neutral(word: str) -> bool:
    """Whether a Latin word reads the same in both languages (a unit or acronym: "kW", "IRR")."""
    return word.lower() in _NEUTRAL


def has_language(text: str) -> bool:
    """Whether `text` shows a language at all: a Chinese character or a word (not "1.5 MW?", "OK", "0.65")."""
    return bool(_CJK.search(text)) or any(w.lower() not in _NEUTRAL for w in _WORD.findall(text))


def named_language(text: str) -> str | None:
    """The language `text` asks to write in ("以后报告都用英文" → "en", "in Chinese" → "zh"), or None.

    Only a language named as the one to use counts; a request merely written in a language names none.
    """
    found = _NAMED.search(text)
    if found is None:
        return None
    return next(name[:2] for name, value in found.groupdict().items() if value)


def pick(lang: str, zh: str, en: str) -> str:
    """`en` for an English conversation, else `zh`."""
    return en if lang == "en" else zh
