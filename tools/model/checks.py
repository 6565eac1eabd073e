"""Checks of model-written text before it is trusted: its figures and files must be computed ones.

`unsupported_claims(text, computed, files)` lists what a model-written summary states that no
computed result supports: a figure that matches no computed number (allowing the usual ways of
writing one: rounding to the digits shown, a fraction as a percentage, yuan as 万元 or 亿元), or a
file path that is not among the run's files. An empty list means the text may be shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

__all__ = ["computed_numbers", "unsupported_claims"]

_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:,\d{3})*(?:\.\d+)?\s*(%|％|万|亿)?")
_PATH = re.compile(
    r"(?:store://[\w\-./]+|[\w\-./\\]+\.(?:md|html?|pdf|docx?|csv|xlsx?|json|txt|png|svg|dot))", re.I
)
_SMALL = 12  # counts and step numbers ("3 个步骤", "步骤 2") need no computed source


def _values(value: Any) -> Iterable[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if math.isfinite(value):
            yield float(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _values(item)
    elif isinstance(value, list | tuple):
        for item in value[:200]:
            yield from _values(item)
    elif isinstance(value, str):
        for shown, _, unit in _figures(value):
            yield shown * _UNIT[unit]


_UNIT = {"": 1.0, "%": 1.0, "％": 1.0, "万": 1e4, "亿": 1e8}
# how a computed number may be shown: as is, a fraction as a percentage (and back), yuan as 万元
_SCALES = {"": (1.0, 100.0, 0.01, 1e-4), "%": (1.0, 100.0), "％": (1.0, 100.0), "万": (1.0,), "亿": (1.0,)}


def _figures(text: str) -> list[tuple[float, int, str]]:
    """(number as shown, decimals shown, unit) of every number written in `text`."""
    found = []
    for match in _NUMBER.finditer(text):
        raw = match.group(0)
        unit = match.group(1) or ""
        digits = raw[: len(raw) - len(unit)].strip().replace(",", "").replace("−", "-")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        found.append((float(digits), decimals, unit))
    return found


def computed_numbers(*sources: Any) -> list[float]:
    """Every number in `sources` (texts, result dicts, lists), for `unsupported_claims`."""
    return [v for source in sources for v in _values(source)]


def _matches(shown: float, decimals: int, unit: str, computed: Sequence[float]) -> bool:
    """Whether some computed number, written the way `unit` says, rounds to `shown` (or within 0.1%)."""
    tolerance = 0.5 * 10 ** (-decimals) + 1e-9
    for number in computed:
        for scale in _SCALES[unit]:
            candidate = number * scale / _UNIT[unit]
            if abs(candidate - shown) <= max(tolerance, 1e-3 * abs(candidate)):
                return True
    return False


def unsupported_claims(text: str, computed: Sequence[float], files: Sequence[str] = ()) -> list[str]:
    """Figures and file paths in `text` that no computed number or run file supports ([] = all supported)."""
    problems = []
    for shown, decimals, unit in _figures(text):
        if not unit and decimals == 0 and 0 <= shown <= _SMALL:
            continue
        if not _matches(shown, decimals, unit, computed):
            problems.append(f"{shown:g}{unit}")
    names = {PurePath(f).name for f in files} | set(files)
    for path in _PATH.findall(text):
        if path not in names and PurePath(path).name not in names:
            problems.append(path)
    return problems
