"""A third conversation generator for the recall benchmark, written apart from the memory's tuning.

    from bench.memory_convgen3 import conversations
    convs = conversations("zh", "test", 6)   # list[Conversation], version 3

Generators v1 and v2 (`bench/memory_convgen.py`) have been tuned against for several rounds;
this one was written without reading the memory's internals or v1/v2's templates, so recall on
it is an honest before/after measure. Only the data classes are shared.

Each conversation: two or three named people (`HumanMessage` / `AIMessage` with `name`; a third
person is a second `HumanMessage` speaker) chat over ≈ 26 sessions spread across about a year
(`created_at` on every message), ≈ 20k tokens. Facts are said inside small talk that reuses their
words for other people, long messages, lists, short reactions and corrections. Questions (≈ 36)
and their evidence (message ids):

* `single`: one fact said once ("Which company did Ines sign a contract with?");
* `paraphrase`: the same kind of fact asked in other words ("Who is Ines's new employer?");
* `update`: a value that changed (rent raised, a PB improved) or was corrected a few messages
  later ("wait no, it's Thursday"); the evidence is the newest statement only;
* `multi_session`: a set gathered over sessions ("What has Dev planted on the balcony?");
* `multi_hop`: a person introduced by relation ("my sister Odile …"), a fact about them sessions
  later by name only ("Odile moved to Leeds!") — "Which city did Dev's sister move to?";
* `temporal`: one of several events of a kind, picked by a time phrase relative to the last
  session ("last spring", "two months ago", "三月份的时候", "去年秋天", "上个月");
* `mixed`: a question in the other language's conventions (English questions with 2025年3月 or a
  Chinese gloss, Chinese questions with "March 2025", "rent", "offer", "kg").

Questions carry `answers` (strings found in the evidence text), so tests can check the evidence.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from types import ModuleType

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from bench import memory_convgen3_en, memory_convgen3_zh
from bench.memory_convgen import Conversation, Question

VERSION = 3
SPLIT_SEEDS = {"dev": 3000, "test": 3500}  # 500 apart; counts stay below that
TARGET_TOKENS = 20_000
_PACE = {"en": 0.93, "zh": 0.83}  # measured: memory.tokens' count / estimate_tokens on these texts
WORDS: dict[str, ModuleType] = {"en": memory_convgen3_en, "zh": memory_convgen3_zh}
_ALT = re.compile(r"\[([^\[\]]*)\]")


@dataclass
class Question3(Question):
    """A question with the answer strings its evidence contains."""

    answers: list[str] = field(default_factory=list)


@dataclass
class Turn:
    """One message before it has an id: speaker index, text, evidence key (or "")."""

    speaker: int
    text: str
    key: str = ""


@dataclass
class _Ask:
    text: str
    keys: list[str]
    kind: str
    answers: list[str]


def expand(rng: random.Random, template: str, **slots: str) -> str:
    """`[a|b]` alternatives picked, then `{slot}`s filled; `〔x〕` becomes a literal `[x]`."""
    text = _ALT.sub(lambda m: rng.choice(m.group(1).split("|")), template)
    text = re.sub(r"\s{2,}", " ", text.format(**slots)).strip()
    return text.replace(" ,", ",").replace(" .", ".").replace("〔", "[").replace("〕", "]")


def estimate_tokens(text: str) -> float:
    """A rough token count for pacing (one per CJK character, ~1.2 per other word, 4 of framing)."""
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    other = len(re.findall(r"[A-Za-z]+|\d+|[^\sA-Za-z\d\u4e00-\u9fff]", text))
    return cjk + 1.2 * other + 4


# -- values ------------------------------------------------------------------------------------------
_ZH_NUM = "零一二三四五六七八九"


def _zh_small(n: int) -> str:
    """1..99 in Chinese numerals (两 for a lone 2 is left to the caller)."""
    if n < 10:
        return _ZH_NUM[n]
    tens, ones = divmod(n, 10)
    return ("十" if tens == 1 else _ZH_NUM[tens] + "十") + (_ZH_NUM[ones] if ones else "")


def _values(rng: random.Random, lang: str, spec: tuple, count: int) -> list[str]:
    """`count` distinct values of a kind, in the order they are said (the last one is current)."""
    kind = spec[0]
    if kind == "money":
        lo, hi, step = spec[1:]
        nums = sorted(rng.sample(range(lo, hi + 1, step), count))  # prices only go up
        return [f"£{n:,}" if lang == "en" else str(n) for n in nums]
    if kind == "halftime":
        secs = sorted(rng.sample(range(95 * 60, 135 * 60), count), reverse=True)
        return [f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" for s in secs]
    if kind == "minutes":
        return [str(n) for n in sorted(rng.sample(range(15, 95, 5), count), reverse=rng.random() < 0.7)]
    if kind == "count":
        return [str(n) for n in rng.sample(range(spec[1], spec[2] + 1), count)]
    if kind == "jin":
        return [
            f"{n}斤" for n in sorted(rng.sample(range(spec[1], spec[2]), count), reverse=rng.random() < 0.7)
        ]
    if kind == "wan":
        return [f"{n / 10:.1f}万".replace(".0万", "万") for n in sorted(rng.sample(range(8, 60), count))]
    if kind == "weekday":
        days = (["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] if lang == "en"
                else ["周一", "周二", "周三", "周四", "周五", "下周一", "下周三"])  # fmt: skip
        return rng.sample(days, count)
    if kind == "clock":
        out = []
        for h, m in rng.sample([(h, m) for h in range(6, 22) for m in range(0, 60, 5)], count):
            if lang == "en":
                out.append(f"{(h - 1) % 12 + 1}:{m:02d}{'am' if h < 12 else 'pm'}")
            else:
                out.append(f"{h}:{m:02d}")
        return out
    if kind == "date":
        nums = rng.sample(range(3, 29), count)
        if lang == "zh":
            return [str(d) for d in nums]
        return [f"{d}{'th' if 10 < d < 14 else {1: 'st', 2: 'nd', 3: 'rd'}.get(d % 10, 'th')}" for d in nums]
    raise ValueError(f"unknown value kind {kind!r}")


# -- time phrases ------------------------------------------------------------------------------------
def _month_start(d: date, back: int = 0) -> date:
    y, m = divmod(d.year * 12 + d.month - 1 - back, 12)
    return date(y, m + 1, 1)


def _month_end(d: date) -> date:
    return _month_start(d, -1) - timedelta(days=1)


_SEASONS = {"en": ["winter", "spring", "summer", "autumn"], "zh": ["冬天", "春天", "夏天", "秋天"]}


def _season(d: date) -> tuple[int, int]:
    """(index into _SEASONS, year of its first month); winter starts in December."""
    if d.month == 12:
        return 0, d.year
    return (d.month % 12) // 3, d.year if d.month > 2 else d.year - 1


def _season_span(idx: int, year: int) -> tuple[date, date]:
    start = date(year, 12, 1) if idx == 0 else date(year, 3 * idx, 1)
    return start, _month_end(_month_start(start, -2))


def time_phrases(lang: str, d: date, now: date, style: str = "native") -> list[tuple[str, date, date]]:
    """Phrases naming a window that holds `d`, as said on `now` (the last session's day).

    `style` "native" uses the language's own conventions; "foreign" the other language's (an
    English question with 2025年3月, a Chinese one with "March 2025"). Only windows that ended
    before `now` are returned.
    """
    ms, me = _month_start(d), _month_end(d)
    back = (now.year - d.year) * 12 + now.month - d.month  # months before now's month
    month = WORDS["en"].MONTHS[d.month - 1]
    idx, year = _season(d)
    start, end = _season_span(idx, year)
    latest = end < now <= _season_span(idx, year + 1)[1]  # the most recent such season that is over
    out: list[tuple[str, date, date]] = []
    if lang == "en" and style == "native":
        out.append((f"in {month} {d.year}", ms, me))
        if 1 <= back <= 10:
            out.append((f"in {month}", ms, me))
        if back == 1:
            out.append(("last month", ms, me))
        if 2 <= back <= 5:
            out.append((f"{['two', 'three', 'four', 'five'][back - 2]} months ago", ms, me))
        if d.day <= 10:
            out.append((f"in early {month} {d.year}", ms, ms + timedelta(days=9)))
        if d.day >= 21:
            out.append((f"at the end of {month} {d.year}", ms + timedelta(days=20), me))
        if latest:
            out.append((f"last {_SEASONS['en'][idx]}", start, end))
    elif lang == "zh" and style == "native":
        out.append((f"{d.year}年{d.month}月", ms, me))
        if 1 <= back <= 10:
            out.append((f"{d.month}月份的时候", ms, me))
        if back == 1:
            out.append(("上个月", ms, me))
        if back == 2:
            out.append(("上上个月", ms, me))
        if 2 <= back <= 5:
            out.append((f"{'两三四五'[back - 2]}个月前", ms, me))
        if d.day <= 10:
            out.append((f"{d.year}年{d.month}月初", ms, ms + timedelta(days=9)))
        if d.day >= 21:
            out.append((f"{d.year}年{d.month}月底", ms + timedelta(days=20), me))
        label = {now.year: "今年", now.year - 1: "去年"}.get(year)
        if idx != 0 and end < now and label:  # winter straddles two years: not named this way
            out.append((f"{label}{_SEASONS['zh'][idx]}", start, end))
    elif lang == "en":  # an English question with Chinese conventions
        out.append((f"{d.year}年{d.month}月", ms, me))
        out.append((f"{d.year}/{d.month:02d}", ms, me))
        if 1 <= back <= 10:
            out.append((f"{d.month}月份", ms, me))
    else:  # a Chinese question with English conventions
        out.append((f"{month} {d.year}", ms, me))
        out.append((f"{d.year}-{d.month:02d}", ms, me))
        if back == 1:
            out.append(("last month", ms, me))
    return [p for p in out if p[2] < now]


# -- the conversation ----------------------------------------------------------------------------------
class _Builder:
    """Plans facts into sessions, pads them with small talk, and writes the questions."""

    def __init__(self, lang: str, seed: int) -> None:
        self.lang, self.seed = lang, seed
        self.rng = random.Random(f"plangraph-convgen3-{lang}-{seed}")
        self.w = WORDS[lang]
        rng = self.rng
        self.people = rng.sample(self.w.NAMES, 3 if rng.random() < 0.4 else 2)
        self.third = rng.sample(self.w.THIRD, len(self.w.THIRD))  # third persons of facts, each used once
        n = rng.randint(24, 28)
        day = date(2023, 1, 1) + timedelta(days=rng.randint(0, 700))
        self.days: list[date] = []
        for _ in range(n):
            self.days.append(day)
            day += timedelta(days=rng.choice([3, 6, 9, 11, 14, 17, 21, 26]))
        self.sessions: list[list[list[Turn]]] = [[] for _ in range(n)]
        self.asks: list[_Ask] = []
        self.keys = 0
        self.said: set[str] = set()

    # helpers
    def person(self, gender: str) -> str:
        """A third person not yet used in a fact, of `gender` ("" for either)."""
        pick = next(p for p in self.third if not gender or p[1] == gender)
        self.third.remove(pick)
        return pick[0]

    def say(self, template: str, **slots: str) -> str:
        return expand(self.rng, template, **slots)

    def key(self) -> str:
        self.keys += 1
        return f"k{self.keys}"

    def other(self, who: int) -> int:
        return self.rng.choice([i for i in range(len(self.people)) if i != who])

    def name(self, who: int) -> str:
        return self.people[who][0]

    def slots(self, who: int) -> dict[str, str]:
        return {"who": self.name(who), "their": self.w.PRONOUN[self.people[who][1]]}

    def fill(self, template: str, fresh: bool = True) -> str:
        """A template with the small-talk slots filled; tries to avoid a text said before."""
        text = ""
        for _ in range(6 if fresh else 1):
            extra = {k: self.rng.choice(v) for k, v in self.w.SLOTS.items()}
            text = self.say(template, name=self.rng.choice(self.w.THIRD)[0], **extra)
            if text not in self.said:
                break
        self.said.add(text)
        return text

    def long_text(self, middle: list[str], most: int = 3) -> str:
        """A long message: an opening, some news (`middle` among it), a closing."""
        rng, parts = self.rng, self.w.LONG
        body = [self.fill(p) for p in rng.sample(parts["mid"], rng.randint(1, most))]
        for text in middle:
            body.insert(rng.randint(0, len(body)), text)
        pieces = ([self.fill(rng.choice(parts["open"]))] if rng.random() < 0.7 else []) + body
        if rng.random() < 0.6:
            pieces.append(self.fill(rng.choice(parts["close"])))
        en = self.lang == "en"
        stop, ends = (".", ".!?") if en else ("。", "。！？")
        done = [p if p[-1] in ends else p + stop for p in pieces[:-1]]
        last = pieces[-1]
        if last[-1] not in ends:
            last += rng.choice(["", stop, "!", " lol"] if en else ["", stop, "！", "哈哈"])
        return (" " if en else "").join([*done, last])

    def stated(self, owner: int, text: str, key: str, schema: dict | None = None) -> list[Turn]:
        """A fact said by `owner` with some talk around it; long messages sometimes bury it."""
        rng, schema = self.rng, schema or {}
        turns: list[Turn] = []
        other = self.other(owner)
        if schema.get("lead") and rng.random() < 0.55:
            turns.append(Turn(other, self.say(rng.choice(schema["lead"]))))
        if rng.random() < 0.2:
            text = self.long_text([text])
        turns.append(Turn(owner, text, key))
        if schema.get("more") and rng.random() < 0.45:
            q, a = rng.choice(schema["more"])
            turns += [Turn(other, self.say(q)), Turn(owner, self.say(a))]
        if schema.get("react") and rng.random() < 0.7:
            turns.append(Turn(other, self.say(rng.choice(schema["react"]))))
        elif rng.random() < 0.4:
            turns.append(Turn(other, self.say(rng.choice(self.w.SHORT))))
        return turns

    def echo(self, schema: dict, values: list[str], used: str) -> None:
        """Small talk in another session that reuses the schema's words (often another value)."""
        rng = self.rng
        if not schema.get("echo"):
            return
        for _ in range(rng.choice([1, 1, 2])):
            self._echo_once(schema, values, used)

    def _echo_once(self, schema: dict, values: list[str], used: str) -> None:
        rng = self.rng
        pick = used if rng.random() < 0.3 else rng.choice([v for v in values if v != used] or [used])
        text = self.say(rng.choice(schema["echo"]), v=pick, name=rng.choice(self.w.THIRD)[0])
        who = rng.randrange(len(self.people))
        turns = [Turn(who, text)]
        if rng.random() < 0.6:
            turns.append(Turn(self.other(who), self.say(rng.choice(self.w.SHORT))))
        self.sessions[rng.randrange(len(self.sessions))].append(turns)

    def ask(self, template: str, keys: list[str], kind: str, answers: list[str], **slots: str) -> None:
        self.asks.append(_Ask(self.say(template, **slots), keys, kind, answers))

    # facts
    def singles(self) -> None:
        rng = self.rng
        plan = []
        for schema in self.w.SINGLE:
            owners = rng.sample(range(len(self.people)), 2 if rng.random() < 0.3 else 1)
            values = rng.sample(schema["values"], len(owners))
            plan += [(schema, o, v) for o, v in zip(owners, values, strict=True)]
        rng.shuffle(plan)
        for i, (schema, owner, v) in enumerate(plan):
            key = self.key()
            s = rng.randrange(len(self.sessions))
            self.sessions[s].append(self.stated(owner, self.say(rng.choice(schema["say"]), v=v), key, schema))
            self.echo(schema, schema["values"], v)
            mixed = (
                schema.get("mixed") and rng.random() < 0.25 and sum(a.kind == "mixed" for a in self.asks) < 3
            )
            kind = "mixed" if mixed else ["single", "paraphrase"][i % 2]
            qs = {"single": schema["ask"], "paraphrase": schema["para"], "mixed": schema.get("mixed", [])}[
                kind
            ]
            self.ask(rng.choice(qs), [key], kind, [v], **self.slots(owner))

    def updates(self) -> None:
        rng = self.rng
        n = len(self.sessions)
        mixed_left = 1
        for schema in rng.sample(self.w.UPDATE, 4):
            owner = rng.randrange(len(self.people))
            values = _values(rng, self.lang, schema["values"], rng.choice([2, 2, 3]))
            at = sorted(rng.sample(range(n), len(values)))
            while any(b - a < 2 for a, b in zip(at, at[1:], strict=False)):
                at = sorted(rng.sample(range(n), len(values)))
            key = ""
            for j, (s, v) in enumerate(zip(at, values, strict=True)):
                key = self.key()
                said = self.say(rng.choice(schema["say0" if j == 0 else "sayn"]), v=v)
                self.sessions[s].append(self.stated(owner, said, key))
            self.echo(schema, _values(rng, self.lang, schema["values"], 3), values[-1])
            mixed = bool(mixed_left and schema.get("mixed") and rng.random() < 0.6)
            mixed_left -= mixed
            template = rng.choice(schema["mixed"] if mixed else schema["ask"])
            self.ask(template, [key], "mixed" if mixed else "update", [values[-1]], **self.slots(owner))
        for schema in rng.sample(self.w.CORRECT, 2):
            owner = rng.randrange(len(self.people))
            first, fixed = _values(rng, self.lang, schema["values"], 2)
            key = self.key()
            turns = [Turn(owner, self.say(rng.choice(schema["say"]), v=first))]
            for _ in range(rng.randint(0, 3)):
                who = rng.randrange(len(self.people))
                turns.append(Turn(who, self.say(rng.choice(self.w.SHORT))))
            turns.append(Turn(owner, self.say(rng.choice(schema["fix"]), v=fixed), key))
            self.sessions[rng.randrange(n)].append(turns)
            self.ask(rng.choice(schema["ask"]), [key], "update", [fixed], **self.slots(owner))

    def sets(self) -> None:
        rng = self.rng
        n = len(self.sessions)
        for schema in self.w.SETS:
            owner = rng.randrange(len(self.people))
            items = rng.sample(schema["items"], rng.randint(3, 4) + 1)
            mine, theirs = items[:-1], items[-1]
            keys = []
            for s, item in zip(sorted(rng.sample(range(n), len(mine))), mine, strict=True):
                keys.append(self.key())
                self.sessions[s].append(
                    self.stated(owner, self.say(rng.choice(schema["say"]), v=item), keys[-1])
                )
            if len(self.people) > 1:  # someone else's item of the same kind: not evidence
                said = self.say(rng.choice(schema["say"]), v=theirs)
                self.sessions[rng.randrange(n)].append(self.stated(self.other(owner), said, ""))
            self.echo(schema, schema["items"], rng.choice(mine))
            para = schema.get("para") and rng.random() < 0.25
            self.ask(rng.choice(schema["para"] if para else schema["ask"]), keys,
                     "paraphrase" if para else "multi_session", mine, **self.slots(owner))  # fmt: skip

    def hops(self) -> None:
        rng = self.rng
        n = len(self.sessions)
        roles = rng.sample(self.w.ROLES, len(self.w.HOPS))
        for hop, (role, asked_role, gender) in zip(self.w.HOPS, roles, strict=True):
            owner = rng.randrange(len(self.people))
            name = self.person(gender)
            v = rng.choice(hop["values"])
            first = rng.randrange(n - 3)
            second = rng.randrange(first + 2, n)
            k1, k2 = self.key(), self.key()
            intro = self.say(rng.choice(self.w.INTRO), role=role, name=name)
            self.sessions[first].append(self.stated(owner, intro, k1))
            self.sessions[second].append(
                self.stated(owner, self.say(rng.choice(hop["say"]), name=name, v=v), k2)
            )
            other = self.person("")  # the same kind of news about someone never introduced
            said = self.say(rng.choice(hop["say"]), name=other, v=rng.choice(hop["values"]))
            self.sessions[rng.randrange(n)].append(self.stated(self.other(owner), said, ""))
            self.ask(rng.choice(hop["ask"]), [k1, k2], "multi_hop", [v], role=asked_role, **self.slots(owner))

    def series(self) -> None:
        rng = self.rng
        now = self.days[-1]
        for i, schema in enumerate(rng.sample(self.w.SERIES, 3)):
            owner = rng.randrange(len(self.people))
            by_month: dict[tuple[int, int], list[int]] = {}
            for s, d in enumerate(self.days[:-1]):
                by_month.setdefault((d.year, d.month), []).append(s)
            months = rng.sample(sorted(by_month), min(5, len(by_month)))
            at = sorted(rng.choice(by_month[m]) for m in months)
            values = rng.sample(schema["values"], len(at))
            events = []
            for s, v in zip(at, values, strict=True):
                key = self.key()
                self.sessions[s].append(self.stated(owner, self.say(rng.choice(schema["say"]), v=v), key))
                events.append((self.days[s], key, v))
            for style, kind, count in (("native", "temporal", 2), ("foreign", "mixed", 1 if i < 2 else 0)):
                asked = 0
                for d, key, v in rng.sample(events, len(events)):
                    if asked == count:
                        break
                    phrases = [p for p in time_phrases(self.lang, d, now, style)
                               if sum(p[1] <= e[0] <= p[2] for e in events) == 1]  # fmt: skip
                    if not phrases:
                        continue
                    phrase = rng.choice(phrases)[0]
                    template = rng.choice(schema["mixed" if style == "foreign" else "ask"])
                    when = {"when": phrase, "zh_when": phrase, "en_when": phrase}
                    self.ask(template, [key], kind, [v], **when, **self.slots(owner))
                    asked += 1

    # small talk
    def filler(self) -> list[Turn]:
        """A stretch of small talk: a thread on one topic, a long message, a list or reactions."""
        rng, w = self.rng, self.w
        pair = rng.sample(range(len(self.people)), 2)
        roll = rng.random()
        if roll < 0.62:
            topic = w.TOPICS[rng.choice(sorted(w.TOPICS))]
            turns = [Turn(pair[0], self.fill(rng.choice(topic["open"]))),
                     Turn(pair[1], self.fill(rng.choice(topic["reply"])))]  # fmt: skip
            for j in range(rng.choice([0, 1, 1, 2, 3])):
                who = pair[j % 2] if len(self.people) == 2 or rng.random() < 0.7 else 3 - sum(pair)
                turns.append(Turn(who, self.fill(rng.choice(topic["more"]))))
            if rng.random() < 0.35:
                turns.append(Turn(rng.randrange(len(self.people)), self.say(rng.choice(w.SHORT))))
            return turns
        if roll < 0.78:
            text = self.long_text([], most=rng.choice([3, 3, 7]))
            return [Turn(pair[0], text), Turn(pair[1], self.say(rng.choice(w.SHORT)))]
        if roll < 0.86:
            head, items = rng.choice(w.LISTS)
            picked = [self.fill(x, fresh=False) for x in rng.sample(items, rng.randint(3, 6))]
            style = rng.random()
            if style < 0.4:
                body = "\n".join(f"- {x}" for x in picked)
            elif style < 0.7:
                body = "\n".join(f"{j + 1}. {x}" for j, x in enumerate(picked))
            else:
                body = (", " if self.lang == "en" else "、").join(picked)
            return [Turn(pair[0], self.say(head) + "\n" + body), Turn(pair[1], self.say(rng.choice(w.SHORT)))]
        return [Turn(pair[rng.randrange(2)], self.say(rng.choice(w.SHORT))) for _ in range(rng.randint(1, 2))]

    def build(self) -> Conversation:
        self.singles()
        self.updates()
        self.sets()
        self.hops()
        self.series()
        rng = self.rng
        facts = sum(estimate_tokens(t.text) for s in self.sessions for seg in s for t in seg)
        per_session = max(0.0, TARGET_TOKENS * _PACE[self.lang] - facts) / len(self.sessions)
        messages: list[BaseMessage] = []
        ids: dict[str, str] = {}
        for s, segments in enumerate(self.sessions):
            budget = per_session * rng.uniform(0.6, 1.4)
            pad: list[list[Turn]] = []
            while budget > 0:
                seg = self.filler()
                budget -= sum(estimate_tokens(t.text) for t in seg)
                pad.append(seg)
            order = segments + pad
            rng.shuffle(order)
            first = rng.randrange(len(self.people))
            if rng.random() < 0.6:
                order.insert(
                    0,
                    [
                        Turn(first, self.say(self.w.GREET[0])),
                        Turn(self.other(first), self.say(self.w.GREET[1])),
                    ],
                )
            if rng.random() < 0.5:
                order.append(
                    [Turn(first, self.say(self.w.BYE[0])), Turn(self.other(first), self.say(self.w.BYE[1]))]
                )
            clock = datetime.combine(self.days[s], datetime.min.time(), UTC) + timedelta(
                minutes=rng.randint(7 * 60, 22 * 60)
            )
            for seg in order:
                for turn in seg:
                    clock += timedelta(seconds=rng.randint(10, 300))
                    if rng.random() < 0.03:
                        clock += timedelta(minutes=rng.randint(8, 40))  # stepped away mid-chat
                    mid = f"c3-{self.lang}{self.seed}-{len(messages):04d}"
                    cls = AIMessage if turn.speaker == 1 else HumanMessage
                    messages.append(cls(content=turn.text, name=self.name(turn.speaker), id=mid,
                                        additional_kwargs={"created_at": clock.isoformat()}))  # fmt: skip
                    if turn.key:
                        ids[turn.key] = mid
        questions: list[Question] = []
        seen = set()
        for a in self.asks:
            if a.text in seen:
                continue
            seen.add(a.text)
            questions.append(Question3(a.text, [ids[k] for k in a.keys], a.kind, a.answers))
        return Conversation(self.lang, self.seed, messages, questions, VERSION)


def conversation(lang: str, seed: int) -> Conversation:
    """One generated conversation; the same language and seed always give the same one."""
    if lang not in WORDS:
        raise ValueError(f"unknown language {lang!r}; the v3 generator writes {sorted(WORDS)}")
    return _Builder(lang, seed).build()


def conversations(lang: str, split: str, count: int) -> list[Conversation]:
    """`count` conversations of the `dev` or `test` split (disjoint seeds)."""
    if split not in SPLIT_SEEDS:
        raise ValueError(f"unknown split {split!r}; use one of {sorted(SPLIT_SEEDS)}")
    if not 0 <= count <= 500:
        raise ValueError(f"count {count} out of range: the splits hold 500 conversations each")
    return [conversation(lang, SPLIT_SEEDS[split] + i) for i in range(count)]
