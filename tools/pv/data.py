"""The shipped PV tables (`tools/pv/tables/`): city yields, provincial feed-in prices, defaults per type."""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TypeVar

__all__ = [
    "SHIPPED_TABLES",
    "Default",
    "Location",
    "data_dir",
    "using_tables",
    "defaults_for",
    "feed_in_price",
    "find_locations",
    "locations",
]

PROJECT_TYPES = ("工商业", "户用")


@dataclass(frozen=True)
class Location:
    """One row of the yield table: where, how much a kWp yields per year, and who says so."""

    province: str
    city: str
    district: str
    specific_yield: float
    source: str
    names_en: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """Display name, e.g. "杭州市余杭区" or "上海市"."""
        return self.city + self.district

    @property
    def name_en(self) -> str:
        """English display name, e.g. "Yuhang, Hangzhou" or "Shanghai" (the table's first spelling)."""
        own = _title(self.names_en[0]) if self.names_en else self.name
        if not self.district:
            return own
        city = next((loc for loc in locations() if loc.city == self.city and not loc.district), None)
        return f"{own}, {city.name_en}" if city else own


@dataclass(frozen=True)
class Default:
    """A default input value for a project type and the basis that justifies it."""

    value: float
    unit: str
    basis: str
    basis_en: str = ""


SHIPPED_TABLES = Path(str(files("tools.pv") / "tables"))
_tables_dir: ContextVar[Path | None] = ContextVar("plangraph_pv_tables", default=None)


@contextmanager
def using_tables(folder: str | Path | None) -> Iterator[None]:
    """Read the PV tables from `folder` (None: the shipped ones) inside this block (this run only)."""
    token = _tables_dir.set(Path(folder).expanduser() if folder else None)
    try:
        yield
    finally:
        _tables_dir.reset(token)


def data_dir() -> Path:
    """Where the tables live: the folder set by `using_tables` (Context.pv_data) or the shipped ones."""
    path = _tables_dir.get() or SHIPPED_TABLES
    if not (path / "yield.csv").is_file():
        raise FileNotFoundError(
            f"PV data tables not found in {path}; set PLANGRAPH_PV_DATA to a folder holding "
            "yield.csv, feed_in.csv and defaults.csv (copy tools/pv/tables and edit it)"
        )
    return path


_T = TypeVar("_T")


def _per_folder(read: Callable[[], _T]) -> Callable[[], _T]:
    """Cache a table reader per tables folder (a run may point at its own folder).

    A folder is checked (`data_dir`) when it is first read, not on every call: routing asks
    `find_locations` about hundreds of words, and two file checks per call were 5 % of the CPU
    before a run's first streamed chunk.
    """
    read_once = functools.cache(lambda folder: read())
    known: dict[Path, _T] = {}

    @functools.wraps(read)
    def wrapper() -> _T:
        folder = _tables_dir.get() or SHIPPED_TABLES
        if folder not in known:
            known[folder] = read_once(data_dir())
        return known[folder]

    return wrapper


def _rows(name: str) -> list[dict[str, str]]:
    with open(data_dir() / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@_per_folder
def locations() -> tuple[Location, ...]:
    """All rows of `yield.csv`."""
    return tuple(
        Location(
            r["province"],
            r["city"],
            r["district"],
            float(r["specific_yield_kwh_per_kwp"]),
            r["source"],
            tuple(n.strip().lower() for n in (r.get("name_en") or "").split("|") if n.strip()),
        )
        for r in _rows("yield.csv")
    )


def _title(name: str) -> str:
    return " ".join(part[:1].upper() + part[1:] for part in name.split())


def _short(name: str) -> str:
    for suffix in ("维吾尔自治区", "壮族自治区", "回族自治区", "自治区", "新区", "省", "市", "区", "县"):
        if name.endswith(suffix) and len(name) - len(suffix) >= 2:
            return name[: -len(suffix)]
    return name


@_per_folder
def _aliases() -> tuple[tuple[str, Location], ...]:
    """(alias, location) pairs, longest alias first; district aliases map to district rows."""
    pairs: dict[str, Location] = {}
    for loc in locations():
        if loc.district:
            for alias in (
                loc.city + loc.district,
                _short(loc.city) + loc.district,
                loc.district,
                _short(loc.district),
            ):
                pairs[alias] = loc
        else:
            for alias in (loc.city, _short(loc.city)):
                pairs.setdefault(alias, loc)
    return tuple(sorted(pairs.items(), key=lambda kv: -len(kv[0])))


@_per_folder
def _latin_aliases() -> tuple[tuple[re.Pattern[str], Location], ...]:
    """Pinyin / English spellings of each row (`name_en` in yield.csv) as word-bounded patterns.

    "xi'an" also matches "xian" and "Xi’an"; "west lake" also "west-lake"; a trailing "city" or
    "district" is allowed and swallowed.
    """
    pairs = []
    for loc in locations():
        for name in loc.names_en:
            body = re.escape(name).replace("'", "['’]?").replace(r"\ ", r"[\s-]*")
            suffix = r"(?:[\s-]*(?:city|district|new area|county))?"
            pairs.append((re.compile(rf"(?<![a-z]){body}{suffix}(?![a-z])"), loc))
    return tuple(sorted(pairs, key=lambda p: -len(p[0].pattern)))


def find_locations(text: str) -> list[tuple[int, Location]]:
    """Known places mentioned in `text` as (position, location), in order of appearance.

    Chinese names and their pinyin/English spellings (lower case) both count.
    """
    found: list[tuple[int, Location]] = []
    taken: list[range] = []

    def take(start: int, end: int, loc: Location) -> None:
        span = range(start, end)
        if not any(start in t or span[-1] in t for t in taken):
            taken.append(span)
            found.append((start, loc))

    for alias, loc in _aliases():
        start = text.find(alias)
        while start >= 0:
            take(start, start + len(alias), loc)
            start = text.find(alias, start + 1)
    for pattern, loc in _latin_aliases():
        for m in pattern.finditer(text):
            take(m.start(), m.end(), loc)
    # "杭州余杭区", "Xiaoshan district of Hangzhou": the city and its district both match close
    # together; keep the more specific one.
    found.sort(key=lambda item: item[0])
    merged: list[tuple[int, Location]] = []
    for pos, loc in found:
        if merged and merged[-1][1].city == loc.city and pos - merged[-1][0] <= 24:
            if loc.district and not merged[-1][1].district:
                merged[-1] = (merged[-1][0], loc)
            continue
        merged.append((pos, loc))
    return merged


@_per_folder
def _feed_in() -> dict[str, tuple[float, str]]:
    return {
        r["province"]: (float(r["coal_benchmark_yuan_per_kwh"]), r["source"]) for r in _rows("feed_in.csv")
    }


def feed_in_price(province: str) -> tuple[float, str] | None:
    """Coal benchmark price of `province` (元/kWh) and its source, or None if not tabulated."""
    return _feed_in().get(province)


@_per_folder
def _defaults() -> dict[tuple[str, str], Default]:
    return {
        (r["project_type"], r["field"]): Default(
            float(r["value"]), r["unit"], r["basis"], r.get("basis_en") or r["basis"]
        )
        for r in _rows("defaults.csv")
    }


def defaults_for(project_type: str) -> dict[str, Default]:
    """Default values of `project_type` ("工商业" or "户用") by field name."""
    return {field: d for (ptype, field), d in _defaults().items() if ptype == project_type}
