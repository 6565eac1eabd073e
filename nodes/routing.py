"""Offline routing: what a piece of text asks for, by BM25 over what the agents and templates say they do."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from snowballstemmer.english_stemmer import EnglishStemmer

from memory.bm25 import IncrementalBM25
from memory.text import QUESTION_WORDS
from tools.segment import term_tokenizer

__all__ = ["Route", "RouteIndex", "best_candidate"]


@dataclass(frozen=True)
class Route:
    """Something a request can be routed to: a workflow template or a single agent.

    `texts` are matched one by one (description, then each example): a request that closely
    matches one example should not be diluted by a long description.
    """

    name: str
    texts: tuple[str, ...]
    steps: tuple[dict, ...]

    @property
    def is_template(self) -> bool:
        """True for a workflow template (several steps, or one step under a workflow's own name)."""
        return len(self.steps) != 1 or self.steps[0]["agentName"] != self.name


class RouteIndex:
    """BM25 over every route's texts; a route scores as its best text.

    Memory's index with Lucene's non-negative idf: with a few dozen texts, Okapi's idf would go
    negative for common terms. `is_value(term)` tells which words are values rather than work
    ("杭州", "commercial", "500kw"): they are left out of what a request is matched on, so an
    example that happens to name a city does not make every question about that city its work.
    `terms` are the words the agents declare (a knowledge base's tags, the values of their inputs):
    texts and requests are segmented with them (`tools.segment`), so "换成户用" holds the word 户用,
    not the characters 户 and 用.
    """

    def __init__(
        self,
        routes: Sequence[Route],
        is_value: Callable[[str], bool] | None = None,
        terms: Collection[str] = (),
    ) -> None:
        self.routes = list(routes)
        self._is_value = is_value
        self._segmenter = term_tokenizer(frozenset(terms))
        self._index = IncrementalBM25(smooth_idf=True)
        for i, route in enumerate(self.routes):
            for j, text in enumerate(route.texts):
                self._index.add((i, j), self.terms(text))
        self._terms = [[set(self.terms(text)) for text in route.texts] for route in self.routes]
        # a term no route uses weighs at least as much as the rarest known one
        known = {t for texts in self._terms for terms in texts for t in terms}
        self._known = known
        self._unknown_idf = max((self._index.idf(t) for t in known), default=1.0)
        self._weight = [
            [sum(self._index.idf(t) for t in terms) or 1.0 for terms in texts] for texts in self._terms
        ]
        self._domain: frozenset[str] | None = None

    def terms(self, text: str) -> list[str]:
        """The words of `text` that can name work: no question words, pointers, numbers or values; English stemmed."""
        is_value = self._is_value
        return [
            _stem(t)
            for t in self._segmenter.tokenize(text)
            if t not in _NOT_CONTENT and not _HAS_DIGIT.search(t) and not (is_value and is_value(t))
        ]

    def words(self, text: str) -> list[str]:
        """The words of `text` as the segmenter cuts them (lower case, no stop words), unstemmed."""
        return list(self._segmenter.tokenize(text))

    @property
    def declared(self) -> frozenset[str]:
        """The agents' declared terms the texts are segmented with."""
        return self._segmenter.terms

    def shares_declared(self, text: str) -> list[bool]:
        """Per route, whether one of its texts holds a declared term of `text` ("绿证" in a note's tags)."""
        terms = {t for t in self.terms(text) if t in self._segmenter.terms}
        return [any(terms & known for known in texts) for texts in self._terms]

    @property
    def domain_terms(self) -> frozenset[str]:
        """The words every agent's title or description uses: the name of the domain ("光伏")."""
        if self._domain is None:
            agents = [set(self.terms(" ".join(r.texts[:2]))) for r in self.routes if not r.is_template]
            self._domain = frozenset(set.intersection(*agents)) if len(agents) > 1 else frozenset()
        return self._domain

    def known_terms(self, text: str) -> tuple[int, int]:
        """How many distinct content words of `text` (of two or more letters) some route's texts use, of how many."""
        terms = {t for t in self.terms(text) if len(t) > 1}
        return len(terms & self._known), len(terms)

    def without_referents(self, text: str) -> str:
        """`text` with the words that point at something already there blanked ("that case", "这个方案").

        A word after a pointer ("this", "that", "这个", "上面的", "刚才的"…) names what the work is
        done on, not the work.
        """
        text = _EN_REFERENT.sub(lambda m: m.group(1) + " " * len(m.group(2)), text)
        out: list[str] = []
        pos = 0
        for run in _CJK_RUN.finditer(text):
            out.append(text[pos : run.start()])
            armed = pending = False
            for word in self._segmenter.cut(run.group()):
                if word in _ZH_DEMONSTRATIVES or (pending and word == "的"):
                    armed, pending = True, False
                    out.append(word)
                elif word in _ZH_BEFORE:  # "刚才的结果", not "刚才算的"
                    pending = True
                    out.append(word)
                elif armed and word not in _ZH_LINKS:
                    out.append(" " * len(word))
                    armed = False
                else:
                    pending = False
                    out.append(word)
            pos = run.end()
        out.append(text[pos:])
        return "".join(out)

    def used_by(self, text: str) -> list[set[str]]:
        """Per route, the content words of `text` (two letters or more) some text of the route uses."""
        terms = {t for t in self.terms(text) if len(t) > 1}
        return [terms & set().union(*texts) for texts in self._terms]

    def in_titles(self, text: str) -> list[bool]:
        """Per route, whether its first text (an agent's title: what it says it is) holds a content word of `text`."""
        terms = set(self.terms(text))
        return [bool(texts and terms & texts[0]) for texts in self._terms]

    def shared_terms(self, text: str) -> list[int]:
        """Per route, how many distinct content terms of `text` its best-sharing text contains."""
        terms = set(self.terms(text))
        return [max((len(terms & known) for known in texts), default=0) for texts in self._terms]

    def closeness(self, text: str) -> list[float]:
        """Per route, how nearly one of its texts says the same as `text` (0–1).

        For each text: the idf-weighted share of `text`'s terms it contains, and of its own terms
        `text` contains; the smaller of the two, and a route's best text counts.
        """
        terms = set(self.terms(text))
        if not terms:
            return [0.0] * len(self.routes)
        idf = {t: self._index.idf(t) or self._unknown_idf for t in terms}
        total = sum(idf.values())
        best = [0.0] * len(self.routes)
        for i, texts in enumerate(self._terms):
            for known, own in zip(texts, self._weight[i], strict=True):
                shared = terms & known
                forward = sum(idf[t] for t in shared) / total
                backward = sum(self._index.idf(t) for t in shared) / own
                best[i] = max(best[i], min(forward, backward))
        return best

    def scores(self, text: str) -> list[float]:
        """Score of every route for `text` (0.0 when it shares no term); question words do not count."""
        best = [0.0] * len(self.routes)
        terms = dict.fromkeys(self.terms(text))
        for key, score in self._index.scores(terms).items():
            route = key[0]  # type: ignore[index]
            best[route] = max(best[route], score)
        return best

    def term_shares(self, term: str, among: Sequence[int]) -> dict[int, tuple[float, int]]:
        """Per route of `among` using `term`: its share of the term's use, and how many of its texts use it.

        A route's use is the fraction of its own texts containing the term (routes with many
        examples do not win by number); the shares of all routes sum to 1.
        """
        use = {}
        for i in among:
            count = sum(term in terms for terms in self._terms[i])
            if count:
                use[i] = (count / len(self._terms[i]), count)
        total = sum(u for u, _ in use.values())
        return {i: (u / total, count) for i, (u, count) in use.items()}

    def named_by_terms(
        self, text: str, share: float, among: Sequence[int], eligible: Sequence[int]
    ) -> list[int]:
        """Routes (of `eligible`) that some single word of `text` names on its own, in the words' order.

        Shares are counted over `among` (every route a word could mean), so a word one eligible
        route shares with an ineligible one names neither.

        A word names a route when it is in the route's first text (an agent's title: what it says it
        is), the route holds at least `share` of the word's use and uses it in two or more texts
        ("敏感性" in "测算、敏感性和报告"); a word several routes use alike ("测算", "造价", "光伏")
        or one only its examples use ("方案") names none. Words of one CJK character are jieba's leftovers of
        unknown words ("可研" → 可, 研) and name nothing.
        """
        named: list[int] = []
        for term in dict.fromkeys(self.terms(text)):
            if len(term) < 2:
                continue
            for route, (part, count) in self.term_shares(term, among).items():
                named_by_title = term in self._terms[route][0]
                if (
                    part >= share
                    and count >= 2
                    and named_by_title
                    and route in eligible
                    and route not in named
                ):
                    named.append(route)
        return named

    def named_alone(
        self,
        text: str,
        among: Sequence[int],
        eligible: Sequence[int],
        skip: Callable[[str], bool] = lambda word: False,
    ) -> list[int]:
        """Routes (of `eligible`) a word of `text` names because no other route of `among` uses it.

        Values say which project, a word of work says what to do with it: in "stress-test the
        returns of a 2 MW plant in Nanjing" the values name the calculation's inputs and "stress",
        a word only the sensitivity analysis's texts use, names that analysis. Words of one CJK
        character are jieba's leftovers and name nothing; a word several routes use ("returns",
        "测算") names none, nor does a word `skip` says is not work (a value's name).
        """
        named: list[int] = []
        for term in dict.fromkeys(self.terms(text)):
            if len(term) < 2 or skip(term):
                continue
            users = list(self.term_shares(term, among))
            if len(users) == 1 and users[0] in eligible and users[0] not in named:
                named.append(users[0])
        return named

    def best(self, text: str) -> tuple[Route, float] | None:
        """The best route for `text` and its score (ties: the earlier route), or None."""
        if not self.routes:
            return None
        scores = self.scores(text)
        i = max(range(len(scores)), key=lambda k: (scores[k], -k))
        return (self.routes[i], scores[i]) if scores[i] > 0 else None


# Question words and pointers shape a request but name nothing; "算" (calculate) names work.
# Light verbs ("做", "make"), measure words ("个") and conditionals ("如果", as English "if" is a
# stop word) carry no work either: "想做一个光伏测算报告" asks for the report.
_NOT_CONTENT = (QUESTION_WORDS - {"算"}) | frozenset(
    "这个 那个 这些 那些 基于 根据 一份 一个 一下 给我 帮忙 "
    "做 做个 搞 搞个 弄 弄个 来个 想要 个 份 些 make need want like get give put".split()
    # number words and currencies are parts of an amount, like digits: "a 2 million yuan mortgage"
    # names its size, not work
    + "hundred thousand million billion yuan rmb cny usd dollar dollars euro euros 元 万元 亿元 块钱 美元".split()
)


# Pointers: the word after one names a thing the conversation holds, not work to do.
_EN_REFERENT = re.compile(
    r"\b((?:this|that|these|those|the same|the previous|the last|the above|the earlier|the current|"
    r"the existing)\s+)([a-z][a-z-]*)",
    re.IGNORECASE,
)
_ZH_DEMONSTRATIVES = frozenset("这 那 这个 那个 这些 那些 这份 那份 这套 那套 该 此 上述 现有 已有".split())
_ZH_BEFORE = frozenset("上面 上次 刚才 刚刚 之前 前面 原来".split())  # point only with 的: "刚才的结果"
_ZH_LINKS = frozenset("的 个 份 套 一".split())
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_HAS_DIGIT = re.compile(r"\d")
_LATIN = re.compile(r"[a-z]")
_STEMMER = EnglishStemmer()  # the English module alone: the package imports all 30 languages
_STEMMER_LOCK = threading.Lock()  # the stemmer keeps the word it works on in itself: one word at a time


# Chinese nouns made of an adjective and 性 / 度 ("敏感性", "敏感度", "可行性") mean what the adjective
# asks ("对电价敏感吗"): like an English stem, the word counts as its adjective.
_ZH_SUFFIX = re.compile(r"^([\u4e00-\u9fff]{2,})[性度]$")


@lru_cache(maxsize=4096)
def _stem(term: str) -> str:
    """English words by their stem, at most six letters ("registration", "register" → "regist"); 敏感性 → 敏感; others as they are."""
    if not _LATIN.match(term):
        zh = _ZH_SUFFIX.match(term)
        return zh[1] if zh else term
    with _STEMMER_LOCK:
        return _STEMMER.stemWord(term)[:6]


def best_candidate(query: str, routes: Sequence[Route]) -> Route | None:
    """The route most similar to `query`, or None when nothing shares a term with it."""
    found = RouteIndex(routes).best(query)
    return None if found is None else found[0]
