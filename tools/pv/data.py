"""The shipped PV tables (`tools/pv/tables/`): city yields, provincial feed-in prices, defaults per type."""

from __future__ import annotations

import calendar
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
    "places_near",
    "unknown_place",
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


# --- places the tables do not hold -------------------------------------------------------------
# A place the user names that no row of `yield.csv` holds ("火星", "拉萨的工厂", "in Lhasa") must be
# named back, not silently replaced by another or asked for as if it had not been said. Where a
# place stands is read from the sentence's structure, not from a list of places:
# - after a word that introduces a place (在, 位于, 地点是, 换到…; in, at, near, located in…);
# - right before what is computed (a project type, a building, 光伏 / 项目 / 电站), as its modifier
#   ("拉萨的工商业项目", "火星 工商业 500kW");
# - a word ending in an administrative suffix (丽水市, 某某县);
# - a clause that is only a name or two ("河南洛阳，工商业1.5MW").
# jieba's dictionary says what kind of word a candidate is: a name (ns place, nr/nrt/nz names, an
# unknown word) or a common noun may be a place; a verb, numeral, pronoun or adverb ("一下", "测算",
# "这个") is not. A word ending in a localizer (屋顶, 厂里, 楼上: 方位词) is a position on a thing.
_INTRODUCES = re.compile(
    r"(?:在|位于|地处|地点|地址|位置|项目地|所在地|来自|搬到|换到|换成|改到|改成|改为|挪到)\s*(?:是|为|在|:|：)?\s*$"
)
_LOCALIZERS = "上下里内外边旁顶面头"
_ADMIN_SUFFIX = re.compile(r"^[\u4e00-\u9fff]{2,6}(?:省|市|县|旗|盟|州)$")
_NAME_TAGS = frozenset({"ns", "nr", "nrt", "nz", "nrfg", "nt", "n", "s", ""})  # "" = not in the dictionary
_CJK_WORD = re.compile(r"^[\u4e00-\u9fff]{2,8}$")
_EN_PLACE = re.compile(
    r"\b(?:in|at|near|around|outside|located in|based in|situated in|from|to|for|about)\s+"
    r"((?:[A-Z][a-zA-Z'’.-]+)(?:\s+[A-Z][a-zA-Z'’.-]+){0,2})"
)


@functools.cache
def _jieba_dictionary() -> bytes:
    import jieba

    path = jieba.get_dict_file()
    try:
        return b"\n" + path.read()
    finally:
        path.close()


@functools.lru_cache(maxsize=8192)
def _word_tag(word: str) -> str:
    """The part of speech jieba's dictionary gives `word` ("" when the dictionary does not hold it)."""
    data = _jieba_dictionary()
    at = data.find(b"\n" + word.encode() + b" ")
    if at < 0:
        return ""
    line = data[at + 1 : data.find(b"\n", at + 1)].decode("utf-8", "replace").split()
    return line[2] if len(line) > 2 else ""


def _cut(text: str) -> list[str]:
    from memory.text import _jieba

    return [w for w in _jieba().lcut(text, HMM=False) if w.strip()]


def _may_name_a_place(word: str, not_a_place: Callable[[str], bool]) -> bool:
    return bool(
        _CJK_WORD.match(word)
        and word[-1] not in _LOCALIZERS
        and _word_tag(word) in _NAME_TAGS
        and not not_a_place(word)
    )


_PROPER = frozenset({"ns", "nr", "nrt", "nz", "nrfg"})


def _is_a_name(word: str, not_a_place: Callable[[str], bool]) -> bool:
    """A proper name by jieba's dictionary (ns place, nr/nrt/nz names), not a common noun ("目标")."""
    return _may_name_a_place(word, not_a_place) and _word_tag(word) in _PROPER


def unknown_place(
    text: str, anchor: str, not_a_place: Callable[[str], bool] = lambda word: False, start: int = 0
) -> str | None:
    """A place `text` names that the tables do not hold, or None (see the comment above).

    `anchor` is a pattern of what the request computes (project types, buildings), before which
    a modifier is where it stands; `not_a_place` rejects words that say something else (a type,
    an owner). Only words from `start` on count (after a change word: "杭州的项目换到拉萨").
    Called only when `find_locations` found nothing, or nothing after a change word.
    """
    from tools.lang import named_language

    for m in _EN_PLACE.finditer(text, start):
        name = m[1].strip(" .")
        words = name.split()
        if (
            not find_locations(name.lower())
            and named_language(f"in {name}") is None
            and not any(w.isupper() for w in words)
            and not {w.lower() for w in words} & _CALENDAR
            and not not_a_place(name.lower())
        ):
            return name
    for run in re.compile(r"[\u4e00-\u9fff]+").finditer(text, start):
        words = _cut(run.group())
        # a clause that is only a name or two, beside others ("河南洛阳，工商业1.5MW"): said to tell where
        alone = (
            len(words) <= 2
            and text.strip() != run.group()
            and all(re.fullmatch(r"[\s，,。；;：:！!？?、]*", side) for side in _clause_sides(text, run))
            and all(_is_a_name(w, not_a_place) for w in words)
        )
        pos = run.start()
        spans = []
        for w in words:
            at = text.find(w, pos)
            spans.append((at, w))
            pos = at + len(w)
        for i, (at, word) in enumerate(spans):
            after = text[at + len(word) :]
            introduced = bool(_INTRODUCES.search(text[:at]))
            # before what is computed: right before it, or through 的 and a short noun phrase
            # ("大理的民宿屋顶"); a proper name also across a few words ("拉萨有个商场")
            modifies = bool(re.match(rf"\s*(?:的\s*[\u4e00-\u9fff]{{0,4}}?)?(?:{anchor})", after))
            loosely = bool(re.match(rf"\s*的?\s*[\u4e00-\u9fff]{{0,4}}?(?:{anchor})", after))
            admin = bool(_ADMIN_SUFFIX.match(word))
            if not (introduced or loosely or admin or alone) or (after[:1] and after[:1] in _LOCALIZERS):
                continue  # no place's position; or "在屋顶上", "厂区里": a position on something
            if not _may_name_a_place(word, not_a_place):
                continue
            tag = _word_tag(word)
            # a common noun is a place only where the structure says so ("在火星", "火星 工商业"):
            # introduced, or modifying the project at the head of the clause
            proper = tag in _PROPER
            if (
                introduced
                or alone
                or (admin and tag in ("ns", ""))
                or (modifies and (tag != "n" or i == 0))
                or (loosely and proper)
            ):
                # "浙江丽水": a province and the place in it are one name (the province says where to look)
                nxt = spans[i + 1] if i + 1 < len(spans) else None
                province = any(word in (loc.province, _short(loc.province)) for loc in locations())
                if province and nxt and nxt[0] == at + len(word) and _may_name_a_place(nxt[1], not_a_place):
                    return word + nxt[1]
                return word
    return None


def _clause_sides(text: str, run: re.Match) -> tuple[str, str]:
    """What stands between `run` and the punctuation (or the text's ends) on either side."""
    before = re.split(r"[，,。；;：:！!？?、\n]", text[: run.start()])[-1]
    after = re.split(r"[，,。；;：:！!？?、\n]", text[run.end() :])[0]
    return before, after


def places_near(name: str, spread: int = 10) -> tuple[str, list[Location]]:
    """Known places to offer instead of `name`: the province it names and that province's cities.

    Else ("", one city from each of `spread` provinces, in table order).
    """
    for loc in locations():
        if loc.province in name or _short(loc.province) in name:
            return loc.province, [p for p in locations() if p.province == loc.province and not p.district]
    firsts = {loc.province: loc for loc in reversed(locations()) if not loc.district}
    chosen = list(reversed(firsts.values()))
    step = max(1, len(chosen) // spread)
    return "", chosen[::step][:spread]


_CALENDAR = frozenset(
    name.lower() for name in (*calendar.month_name[1:], *calendar.day_name, *calendar.month_abbr[1:])
)
