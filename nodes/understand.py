"""Offline understanding: a request in the user's own words becomes the plan it asks for.

No lists of request phrasings: the request is cut into clauses at punctuation and the language's
connectives (然后, 再, then…); each clause is matched (BM25) against what every agent says it does
(name, description, examples, the knowledge base's titles); the agents' own parsers add what the
words state structurally (`AgentSpec.claims`, `parse_answer`); dependencies follow from what
agents produce and consume (`AgentSpec.produces` / `consumes`). The conversation's results decide
the rest:

- clauses that name agents → those agents, each after (and depending on) the steps producing what
  it consumes; a negated clause ("不用报告") removes its agent; a request that says what one of a
  workflow template's examples says runs the template; the parts of a clause joined by "和" /
  "and" are read on their own too; a question no agent's structure claims is not that agent's
  work; a clause stating all of a producer's required inputs and naming nothing asks for it;
  a clause asking for work whole ("a full report", "完整") adds the producers of all it consumes;
  the word after a pointer ("that case", "这个方案") names no work unless nothing else does;
- a question without values that fits a corpus agent (the knowledge base) nearly as well as the
  chosen one → the planner asks the corpus (`AgentSpec.serves`) whether it answers it;
- values stated and a consumer named → the producer runs first when the values are all it needs,
  or when they change the conversation's case ("电价改成0.8再做敏感性": recomputed, then analysed);
- a consumer named, no new values, and the conversation already holds what it consumes → no
  producer step ("在这个方案基础上做敏感性分析");
- no agent named, values stated → the producer runs again with them (a follow-up changing one
  value: the agent carries the rest from the conversation's latest result and says so); with a
  result in the conversation a supposition ("如果是户用呢", "how about in Taiyuan?") or a wh-question
  stating values ("How would it look with a 7% discount rate?") states values too, and a
  conditional word shared with some agent's example names no work;
- no agent named, no values, a question about a figure of the latest result → answered from the
  results index (`AgentSpec.recall`), nothing recomputed; the words naming the figure and the
  thing pointed at ("刚那个方案总共要投多少钱") name no work;
- no agent named, no values, a fragment only the newest work's agent reads ("and for 12%?" after a
  reverse optimisation) → that agent again;
- a question stating no number that asks no figure of the agent its words matched ("企业交的所得税，
  装了光伏以后能减免吗", "which voltage does a small home system connect to?") → the corpus when more
  of its words are the corpus's, else the corpus's documents decide (`AgentSpec.serves`);
- a template is used only when the words ask for what it ends in ("做个敏感性分析" is no report);
- nothing named, but most words are the agents' and the corpus's own ("the warranty of an
  inverter") → the corpus agent, which answers or says it does not know;
- an agent named only by a verb ("算", "calculate") of something no agent's texts speak of
  ("帮我算一下车贷利息") → out of scope, like nothing at all:
- nothing at all → a short honest reply saying what plangraph can do, in the request's language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from nodes.kit.registry import AgentSpec
from nodes.routing import Route, RouteIndex
from tools.lang import detect_language, neutral
from tools.results import Results

__all__ = [
    "CLAUSE_FLOOR",
    "TEMPLATE_CLOSENESS",
    "TERM_SHARE",
    "VALUES_CLAUSE_FLOOR",
    "Understanding",
    "clauses",
    "compose",
    "language",
    "out_of_scope",
    "understand",
    "value_words",
]

# Lowest BM25 score (smooth idf) at which a clause names an agent, and how close a whole request
# must be to a template's example to use the template; set on the development split of
# tests/understanding (bench/understanding_eval.py), the test split reported in docs/understanding.md.
CLAUSE_FLOOR = 2.5
VALUES_CLAUSE_FLOOR = 10.0  # a clause stating input values ("杭州工商业500kW") rarely asks for anything else
TEMPLATE_CLOSENESS = 0.7  # a template is used when one of its texts says nearly what the request says
TERM_SHARE = 0.7  # a single word names an agent when that agent holds this share of the word's use
TITLE_WEIGHT = 1.1  # an agent whose title holds a word of the clause wins a near tie of scores
RIVAL_SHARE = 0.8  # a corpus agent scoring this share of the chosen agent's score is asked too
DOMAIN_SHARE = (
    0.6  # a request no agent's words matched is the corpus's when this share of its words are known
)
_SPLIT = re.compile(
    r"[，,。；;！!？?\n、：:]|然后|接着|之后|随后|最后|顺便|另外|并且|同时|以及|再(?=[做看算出给生帮反分导画])"
    r"|\b(?:then|and then|also|plus|afterwards|finally)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"不用|不要|无需|不需要|不必|别(?!的)|免了|跳过|省略|省掉|略过|(?:就|也)?算了(?=[\s。.!！]*$)"
    r"|\b(?:no need|no|don't|do not|without|skip|not needed)\b",
    re.I,
)
_JOIN = re.compile(r"[和与及+&]|\band\b", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_QUESTION = re.compile(
    r"[吗么][\s?？]*$|^\s*(?:can|could|is|are|does|do|will|would|should|what|how|why|which|when|where|who)\b"
    # an indirect question: "tell me whether …", "I'd like to know if …", "问一下…", "想知道…"
    r"|^\s*(?:(?:please\s+)?(?:tell|show) me|(?:i'd|i would|i) (?:like to |want to )?know|i wonder|ask(?:ing)?)\s+"
    r"(?:whether|if|how|what|why|which|when|where|who)\b|^\s*(?:问一下|问下|请问|想知道|想问)",
    re.I,
)
# Words asking for a piece of work whole ("a full report": with the calculation and the sensitivity
# analysis it is made from), in both languages; closed-class words, like the negation cues above.
_WHOLE = re.compile(
    r"完整|全套|整套|全面|一条龙|全流程|\b(?:full|complete|comprehensive|whole|entire|end-to-end)\b", re.I
)
_A_NOT_A = re.compile(r"([\u4e00-\u9fff])不\1")  # 要不要, 用不用, 需不需要: a question, not a refusal
# A supposition ("如果是户用呢", "要是电价0.85呢", "what if it were 1.5 MW?", "how about in Taiyuan?"):
# conditional words and a closing "呢" — closed-class words, like the negation cues above.
_SUPPOSE = re.compile(
    r"如果|要是|假如|假设|假定|若是|倘若|万一|的话|呢[\s?？!！。.]*$"
    r"|\b(?:what if|if|suppose|supposing|assuming|how about|what about|instead)\b",
    re.IGNORECASE,
)
_YES_NO = re.compile(r"[吗么][\s?？]*$")
# A question about an earlier result than the newest: the first one, or the one before the last change.
_FIRST = re.compile(
    r"第一次|第一个|第一版|最开始|一开始|最早|最初|原来的|原先的|原方案"
    r"|\b(?:first|original|initial)\s+(?:calculation|case|run|one|result|scenario|version|numbers|figures)\b"
    r"|\b(?:at first|originally|in the beginning)\b",
    re.I,
)
_BEFORE_LATEST = re.compile(
    r"改之前|调整之前|调整前|修改前|改动前|没改之前|上上次|\bbefore (?:the|that|this|my|our|we|i)\b(?: \w+)? change"
    r"|\bthe one before\b|\bprevious one\b",
    re.I,
)
# Chinese wh-words: a clause asking how much, which, why, whether (not only one ending in 吗)
_ZH_WH = re.compile(
    r"多少|多大|几[年个度次种]|什么|怎么|怎样|如何|哪|为什么|为何|是否|能否|可否|有没有|是不是|会不会|能不能"
)
# A question about how much something is lost or changed ("会少多少", "how much less"), not a figure's value
_LOSS = re.compile(
    r"少多少|少发|多发|损失|(?:下降|降低|减少|增加|提高)(?:了)?多少|\bhow much (?:less|more|lower|higher)\b"
    r"|\b(?:lose|loses|lost|loss|drop|drops|reduce|reduces|reduction)\b",
    re.I,
)
# A question about a way of doing something, not how a result looks ("怎么样", "how would it look")
_HOW_TO = re.compile(
    r"怎么(?!样)|怎样(?!了)|如何|\bhow (?:do|does|can|should|to) (?:i|we|you|one|they)?\b|\bhow to\b", re.I
)
# Words that ask the corpus something without a question's form ("讲讲绿证", "tell me about subsidies")
_ASKS = re.compile(
    _ZH_WH.pattern + r"|讲|介绍|说说|说明|解释|查|了解|告诉|科普|政策|规定|流程|条件|要求"
    r"|\b(?:explain|tell|describe|summari[sz]e|look up|check|whether|if|policy|policies|rules?|requirements?)\b",
    re.I,
)
# an English question answered yes or no ("Is 8% a reasonable discount rate?"), not "how / what would …"
_EN_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|can|could|will|would|should|shall|has|have|had|may|might)\b", re.I
)


@dataclass
class Understanding:
    """What the planner makes of a request: steps to run, or a reply given without a plan."""

    lang: str
    steps: list[dict] = field(default_factory=list)
    reply: str = ""
    note: str = ""
    matched: bool = True  # False: no agent's words matched (the reply says what plangraph can do)
    # a corpus agent (the knowledge base) the words fit nearly as well as the one step chosen: the
    # planner asks it (`AgentSpec.serves`) whether its documents answer the question
    alternative: str = ""


def language(text: str) -> str:
    """The request's language (`tools.lang.detect_language`: words, not units, decide)."""
    return detect_language(text)


def clauses(text: str) -> list[str]:
    """The request cut at punctuation and connectives (empty pieces dropped)."""
    return [c.strip() for c in _SPLIT.split(text) if c and c.strip()]


def _inputs_stated(query: str, specs: Mapping[str, AgentSpec]) -> dict[str, dict]:
    """Inputs each producer's own parser reads in the text: the values of a (new) project."""
    found = {}
    for name in _producers(specs):
        spec = specs[name]
        if not spec.inputs:
            continue
        fields = {k: v for k, v in spec.parse_answer(query).items() if k != "reuse_previous"}
        if fields:
            found[name] = fields
    return found


def _states_values(clause: str, specs: Mapping[str, AgentSpec]) -> bool:
    """Whether a clause is a statement of values: a number, or several inputs ("杭州工商业500kW").

    A lone word an input parser knows ("commercial", "户用") is the clause's topic, not a value; a
    change by an amount ("造价再便宜0.4元/W") is a value.
    """
    return any(
        len(fields) >= 2
        or any(
            (isinstance(v, int | float) and not isinstance(v, bool)) or (isinstance(v, dict) and v)
            for v in fields.values()
        )
        for fields in _inputs_stated(clause, specs).values()
    )


def _supposes(clause: str) -> bool:
    """Whether a clause supposes something ("如果是户用呢", "what if it were 1.5 MW?"), not asks yes or no."""
    return bool(_SUPPOSE.search(clause)) and not _A_NOT_A.search(clause) and not _YES_NO.search(clause)


def _asks_with_values(clause: str, specs: Mapping[str, AgentSpec]) -> bool:
    """Whether a wh-question states input values ("How would it look with a 25-year lifetime?", "8%折现率下怎么样")."""
    return (
        _is_question(clause)
        and not _YES_NO.search(clause)
        and not _A_NOT_A.search(clause)
        and not _EN_YES_NO.search(clause)
        and _states_values(clause, specs)
    )


def _is_question(clause: str) -> bool:
    """Whether a clause asks a yes/no or wh- question ("还能全额上网吗", "Can … still …"): a topic, not values."""
    return bool(_QUESTION.search(clause) or _A_NOT_A.search(clause))


def _scopes(clause: str, index: RouteIndex) -> list[tuple[str, bool]]:
    """A clause as (text, negated) parts: what a refusal covers and what it does not.

    "compute the IRR - no report needed" refuses what follows the cue; "报告就不用了" what precedes
    it (nothing that names work follows). "要不要备案" is a question, not a refusal.
    """
    cue = _NEGATION.search(_A_NOT_A.sub(lambda m: " " * len(m.group()), clause))
    if cue is None:
        return [(clause, False)]
    before, after = clause[: cue.start()].strip(), clause[cue.end() :].strip()
    if index.terms(after):
        return [(before, False), (after, True)] if before else [(after, True)]
    return [(before, True)]


def value_words(specs: Mapping[str, AgentSpec]) -> Callable[[str], bool]:
    """Whether a single word is a value some producer's parser reads ("杭州", "commercial", "3mw").

    Routing leaves such words out: they say which project, not which work.
    """
    parsers = [specs[name].parse_answer for name in _producers(specs) if specs[name].inputs]

    @lru_cache(maxsize=4096)
    def is_value(word: str) -> bool:
        return any(k != "reuse_previous" for parse in parsers for k in parse(word))

    return is_value


def _producers(specs: Mapping[str, AgentSpec]) -> list[str]:
    """Agents that consume nothing (they start from the user's inputs), registry order."""
    return [n for n, s in specs.items() if s.produces and not s.consumes]


def understand(
    query: str, specs: Mapping[str, AgentSpec], index: RouteIndex, results: Results, lang: str = ""
) -> Understanding:
    """The plan `query` asks for (steps with dependencies), or a direct reply; see the module doc.

    `lang` is the reply's language when the caller knows it better than the words ("1.5 MW?" in an
    English conversation); by default the request's own.
    """
    lang = lang or language(query)
    template = _template(query, index)
    producers = _producers(specs)
    existing = {kind for s in specs.values() for kind in s.produces if results.latest(kind) is not None}
    held = any(set(specs[p].produces) & existing for p in producers)
    # a word pointing at something the conversation holds ("that case", "这个方案") asks for no
    # new work of its own, unless nothing else in the request does ("redo that report")
    plain = _named(query, specs, index, referents=True, held=held)
    said: dict[str, list[str]] = {}
    asked, excluded, alternative = _named(query, specs, index, referents=False, held=held, said=said)
    if not asked:
        asked, excluded, alternative = plain
    stated = _inputs_stated(query, specs)
    if template is not None and not _asks_for_goal(template, {*asked, *plain[0]}, specs, index):
        template = None  # "做个敏感性分析" is near "敏感性分析报告", but no report was asked for

    # a question about a figure ("the IRR from that calculation", "刚那个方案总共要投多少钱") is read
    # with every word, or without the words that name the figure and the thing pointed at
    if template is None and not stated and held:
        reply = _recall(query, specs, results, lang)
        if reply and (set(plain[0]) <= set(producers) or _only_a_figure(query, specs, index, results, lang)):
            return Understanding(lang, reply=reply, note="answered from the conversation's results")
    if template is not None:
        return _from_template(template, asked, specs, stated, existing, lang)
    asked = [a for a in asked if a not in excluded]
    if (
        asked
        and not held
        and _no_project(query, stated, specs, index)
        and _foreign(query, asked, specs, index)
    ):
        return Understanding(
            lang, reply=out_of_scope(specs, lang), note="another domain's words", matched=False
        )
    if not asked:  # values alone: a follow-up on the conversation's result, or a new project's values
        follow = next(
            (
                p
                for p in producers
                if p in stated and _values_ask_for(p, stated[p], query, specs, index, existing)
            ),
            None,
        )
        follow = follow or _continued(query, specs, results)
        if follow is None:
            corpus = _in_domain(query, specs, index)
            if corpus:  # its words are the agents' own: the corpus answers, or says it does not know
                return Understanding(lang, steps=compose([corpus], specs), note=f"in {corpus}'s domain")
            return Understanding(lang, reply=out_of_scope(specs, lang), note="out of scope", matched=False)
        asked = [follow]
    needed = {k for a in asked for k in specs[a].consumes}
    if stated:  # a new project, or a change to the case: its producer first
        for producer in producers:
            spec = specs[producer]
            complete = all(f.name in stated.get(producer, {}) for f in spec.inputs if f.required)
            # with the conversation's case, changed values are recomputed first ("电价改成0.8再做敏感性")
            changed = producer in stated and bool(set(spec.produces) & existing)
            if producer not in asked and set(spec.produces) & needed and (complete or changed):
                asked.insert(0, producer)
    else:  # nothing new was said: work on what the conversation already holds
        asked = [a for a in asked if not (a in producers and set(specs[a].produces) & needed & existing)]
    steps = _with_requirements(compose(asked, specs), said)
    # several steps are one question's when it asks a fact ("积了灰，发电量会少多少"): the corpus may answer it
    one_question = len(steps) == 1 or all(_asks_a_fact(a, query, specs, index) for a in asked)
    if not one_question or alternative in asked:
        alternative = ""
    return Understanding(lang, steps=steps, note="clauses → agents", alternative=alternative)


def _with_requirements(steps: list[dict], said: Mapping[str, list[str]]) -> list[dict]:
    """Each step of a combined request with the words that asked for it as its requirement.

    "绍兴工商业800kW帮忙测算一下；另外现在工商业光伏还能选全额上网吗？": the knowledge step's
    question is its own clause, not the whole request (a step of one request keeps the request;
    a step no clause named, a producer added for what others consume, too).
    """
    if len(steps) < 2:
        return steps
    return [
        {**s, "requirement": "；".join(said[s["agentName"]])} if said.get(s["agentName"]) else s
        for s in steps
    ]


def _only_a_figure(
    query: str, specs: Mapping[str, AgentSpec], index: RouteIndex, results: Results, lang: str
) -> bool:
    """Whether a question the results answer asks for nothing else once its figure's words are gone.

    The words naming the figure ("cost", "回收期") are those without which the results no longer
    answer it; the word after a pointer ("那个方案") names the thing, not work. "How sensitive is
    the NPV to the tariff?" keeps "sensitive" and stays the sensitivity analysis's.
    """
    if any(spec.claims is not None and spec.claims(c) for c in clauses(query) for spec in specs.values()):
        return False  # its structure asks for work ("电价最低多少能7年回本": a target)
    # the words pointing at an earlier result ("before the change", "第一次") name a thing too
    rest = _FIRST.sub(
        lambda m: " " * len(m.group()), _BEFORE_LATEST.sub(lambda m: " " * len(m.group()), query)
    )
    for word in dict.fromkeys(index.words(query)):
        if not _recall(_blank(query, word), specs, results, lang):
            rest = _blank(rest, word)
    return set(_named(rest, specs, index, referents=False, held=True)[0]) <= set(_producers(specs))


def _asks_a_fact(agent: str, query: str, specs: Mapping[str, AgentSpec], index: RouteIndex) -> bool:
    """Whether a question, in a request stating no number, asks something `agent` does not compute.

    "企业交的所得税，装了光伏以后能减免吗", "落了很多灰，会少发多少电", "Which voltage does a small home
    system of a few kilowatts connect to?": no value to compute with (a project described by its type
    or size in words is a topic, not inputs), and no figure of the agent's results asked for (its
    `recall` reads none; "多少年能回本" asks the payback, and stays the calculation's). The words
    matched the agent; whether they are a fact the corpus holds, its documents decide
    (`AgentSpec.serves`, asked by the planner).
    """
    spec = specs[agent]
    # the request asks (a condition before the question, "企业装光伏的话，所得税能少交吗", is part of it)
    if spec.vocabulary is not None or not any(_is_question(c) or _ZH_WH.search(c) for c in clauses(query)):
        return False
    if _states_values(query, specs) or any(s.claims is not None and s.claims(query) for s in specs.values()):
        return False
    # how much a figure changes under some condition ("积了灰，发电量会少多少") is no figure of a result
    if _LOSS.search(query):
        return True
    if spec.recall is not None and spec.recall(query, {"results": _EveryFigure(), "inputs": {}}, "zh"):
        return False
    # a way of doing something ("屋顶能装多少千瓦怎么估", "how do I apply") is no figure either
    if _HOW_TO.search(query):
        return True
    # and it speaks of something the corpus's texts name and the agent's do not (所得税, voltage):
    # "能挣钱吗" beside "装光伏" is the calculation's question in other words
    used = index.used_by(query)
    own = set().union(*(used[i] for i, r in enumerate(index.routes) if r.name == agent))
    corpus = set().union(
        *(
            used[i]
            for i, r in enumerate(index.routes)
            if specs.get(r.name) is not None and specs[r.name].vocabulary is not None
        )
    )
    return bool(corpus - own)


class _EveryFigure(dict):
    """A headline holding every figure (1.0): whether a question asks one, whatever it is called."""

    def __init__(self) -> None:
        super().__init__(any=1.0)

    def get(self, key: object, default: object = None) -> float:  # noqa: ARG002 - every key is held
        return 1.0


def _blank(text: str, word: str) -> str:
    """`text` with `word` blanked (a whole word in Latin script)."""
    pattern = rf"(?i)\b{re.escape(word)}\b" if word.isascii() else re.escape(word)
    return re.sub(pattern, lambda m: " " * len(m.group()), text)


def _named(
    query: str,
    specs: Mapping[str, AgentSpec],
    index: RouteIndex,
    referents: bool,
    held: bool = False,
    said: dict[str, list[str]] | None = None,
) -> tuple[list[str], set[str], str]:
    """Agents the request's clauses name (in order), those a negated clause refuses, and a corpus rival.

    Without `referents`, words that point at a thing ("that case") do not name agents by words.
    With a result of a producer `held` by the conversation, a clause supposing one of its input
    values ("如果是户用呢", "how about in Taiyuan?") is a statement of values: it asks what that
    result would be with the value, and names other work only on a much stronger match (a
    conditional word in one of an agent's examples is not enough). `said` collects, per agent, the
    clauses that named it.
    """
    asked: list[str] = []
    excluded: set[str] = set()
    alternative = ""
    claiming = [
        n for n, s in specs.items() if s.claims is not None and any(s.claims(c) for c in clauses(query))
    ]
    for clause, negated in (part for c in clauses(query) for part in _scopes(c, index)):
        words = clause if referents else index.without_referents(clause)
        named = [n for n, s in specs.items() if s.claims is not None and s.claims(clause)]
        if not named:  # "…IRR要做到30%，光伏装多大合适": the unknown of a target another clause sets
            named = _unknown_of(clause, claiming, specs)
        if not named:  # a clause of values names an agent by its words only when it says much more
            supposed = held and (
                (_supposes(clause) and bool(_inputs_stated(clause, specs)))
                or _asks_with_values(clause, specs)
            )
            values = supposed or (_states_values(clause, specs) and not _is_question(clause))
            found = _best_agent(words, specs, index, VALUES_CLAUSE_FLOOR if values else CLAUSE_FLOOR)
            if found is None and values and not supposed:
                found = _named_beside_values(words, specs, index)
            if found and specs[found].vocabulary is not None:
                found = _about_the_project(words, found, query, specs, index)
            if (
                found
                and specs[found].vocabulary is not None
                and not (_is_question(clause) or _ASKS.search(clause))
                and _complete_project(query, specs)
            ):
                # beside a whole project, a clause that asks nothing ("…located in Jiaxing, Zhejiang
                # province", "thanks in advance") describes it: the corpus answers questions
                found = None
            named = [found] if found else []
            if found and specs[found].vocabulary is not None and not _is_question(clause):
                # "Calculate 600 kW commercial in Hefei and I'd like to know if …": the project too
                named = [*_complete_project(clause, specs), found]
            if found and not negated and _is_question(clause) and not _inputs_stated(clause, specs):
                # a question beside a whole project is about that project, not the corpus's topic
                if not _complete_project(query, specs):
                    alternative = alternative or _corpus_rival(words, found, specs, index)
            if found and not negated and not held and _asks_a_fact(found, query, specs, index):
                # a fact, not a figure: the corpus when more of its words are the corpus's, else its documents decide
                # (a corpus its words fit less closely by score is still the one that speaks of it:
                # "Which inverter brand is the most reliable…" is no calculation, whatever the notes hold)
                near = _corpus_rival(words, found, specs, index)
                rival = near or _fact_corpus(specs)
                shared = {index.routes[i].name: n for i, n in enumerate(index.shared_terms(words))}
                used = _used(words, index)
                own, corpus = used.get(found, set()), used.get(rival, set())
                # (unless its words are mostly another domain's: "How do I calculate … a mortgage?")
                speaks = bool(corpus - own) and len(corpus) > len(own)
                if rival and (
                    shared.get(rival, 0) > shared.get(found, 0)
                    or (speaks and (near or not _foreign(query, [found], specs, index)))
                ):
                    named = [rival]
                else:
                    alternative = alternative or next(
                        (n for n, s in specs.items() if s.vocabulary is not None and s.serves is not None), ""
                    )
            if not named and not negated and not _is_question(clause):
                named = _complete_project(clause, specs)  # "a 600 kW commercial plant in Hefei"
        # a question on a corpus's topics (the knowledge base's) names no further work by single words
        if not any(specs[n].vocabulary is not None for n in named):
            named += [n for n in _also_named(words, specs, index) if n not in named]
            named += [n for n in _joined(words, specs, index) if n not in named]
        if named and _WHOLE.search(clause):  # "a full report": with everything it is made from
            named = _with_inputs(named, specs)
        for name in named:
            if negated:
                excluded.add(name)
            elif name not in asked:
                asked.append(name)
            if not negated and said is not None:
                said.setdefault(name, []).append(clause)
    return asked, excluded, alternative


def _used(text: str, index: RouteIndex) -> dict[str, set[str]]:
    """Per agent, the content words of `text` some text of it uses."""
    found: dict[str, set[str]] = {}
    for i, words in enumerate(index.used_by(text)):
        if not index.routes[i].is_template:
            found.setdefault(index.routes[i].name, set()).update(words)
    return found


def _no_project(
    query: str, stated: Mapping[str, dict], specs: Mapping[str, AgentSpec], index: RouteIndex
) -> bool:
    """Whether a request describes no project, so its words alone say whose domain it is.

    No values, and at most a place: small talk names cities too ("下周广州出太阳吗"). A building or
    owner the project type is read from ("a small shop", "公司") describes one only beside some
    word the agents use ("Is rooftop solar worth it for a small shop?"; not "公司发的年终奖怎么算个税").
    """
    if _states_values(query, specs):
        return False
    described = any(not k.startswith("location") for fields in stated.values() for k in fields)
    return not described or index.known_terms(query)[0] == 0


def _fact_corpus(specs: Mapping[str, AgentSpec]) -> str:
    """The corpus agent that judges fact questions (the knowledge base: `vocabulary` and `serves`), or ''."""
    return next((n for n, s in specs.items() if s.vocabulary is not None and s.serves is not None), "")


def _unknown_of(clause: str, claiming: Sequence[str], specs: Mapping[str, AgentSpec]) -> list[str]:
    """The agent whose own input a clause names as the unknown of the request's target.

    A target set in one clause ("IRR要做到30%") and the value sought asked in another ("光伏装多大
    合适", "what tariff would that take") are one piece of work: the clause asking for the
    unknown (an input of the agent claiming the target, read by its parser) states no value.
    """
    if _states_values(clause, specs):
        return []
    for name in claiming:
        own = {f.name for f in specs[name].inputs}
        if own & set(specs[name].parse_answer(clause)):
            return [name]
    return []


def _named_beside_values(clause: str, specs: Mapping[str, AgentSpec], index: RouteIndex) -> str | None:
    """The agent a word of work names in a clause of values ("stress-test the returns of a 2 MW plant").

    The values say which project; a word only one agent's texts use says what to do with it
    (`RouteIndex.named_alone`). Agents that name themselves by structure (`claims`) or whose texts
    are a corpus's vocabulary are not named so.
    """
    among = [i for i, r in enumerate(index.routes) if not r.is_template and r.name in specs]
    eligible = [
        i
        for i in among
        if specs[index.routes[i].name].claims is None and specs[index.routes[i].name].vocabulary is None
    ]
    # a value's name ("capex", "电价": followed by a number it states an input) says which value, not work
    is_value_name = value_names(specs)
    found = index.named_alone(clause, among, eligible, skip=is_value_name)
    # one rare word beside values is an accident ("老板让我算算…": the boss asks, no report); a phrase of
    # the agent's own texts (two of their words: "stress-test the returns") asks for its work
    found = [i for i in found if index.shared_terms(clause)[i] >= 2]
    # and the clause's words as a whole fit that agent best ("先把…的基础方案算出来": 基础 is a word of
    # the sensitivity analysis's description, but the clause is the calculation's)
    scores = index.scores(clause)
    best = max(among, key=lambda i: scores[i], default=None)
    return index.routes[found[0]].name if len(found) == 1 and found[0] == best else None


def value_names(specs: Mapping[str, AgentSpec]) -> Callable[[str], bool]:
    """Whether a word is the name of an input value: followed by a number, a producer's parser reads it."""
    parsers = [specs[name].parse_answer for name in _producers(specs) if specs[name].inputs]

    @lru_cache(maxsize=4096)
    def is_name(word: str) -> bool:
        return any(k != "reuse_previous" for parse in parsers for k in parse(f"{word} 1"))

    return is_name


def _with_inputs(names: Sequence[str], specs: Mapping[str, AgentSpec]) -> list[str]:
    """`names`, each after every agent producing what it consumes (transitively): the whole work."""
    found: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        if name in seen:  # placed already, or a cycle of producers
            return
        seen.add(name)
        for kind in specs[name].consumes:
            for other, spec in specs.items():
                if kind in spec.produces and other != name:
                    add(other)
        found.append(name)

    for name in names:
        add(name)
    return found


def _foreign(query: str, asked: Sequence[str], specs: Mapping[str, AgentSpec], index: RouteIndex) -> bool:
    """Whether a request states no values and its words are mostly another domain's ("帮我算一下房贷月供").

    The verb ("算", "calculate") names the calculation, but the thing to calculate is a word
    no agent's texts or the corpus use ("Calculate my mortgage repayments": two such words, one
    known). A corpus agent (the knowledge base) judges its own questions, so it is not second-guessed,
    and a request naming the domain itself ("光伏") is the domain's.
    """
    if any(specs[name].vocabulary is not None for name in asked):
        return False
    if {t for t in index.terms(query) if len(t) > 1} & index.domain_terms:  # "…装光伏划不划算"
        return False
    known, total = index.known_terms(query)
    unknown = total - known
    # Chinese segmentation leaves pieces no text uses ("上装", "不划算"): there, only no known word counts
    return (total > 0 and known == 0) or (language(query) == "en" and unknown >= 2 and unknown >= known)


def _in_domain(query: str, specs: Mapping[str, AgentSpec], index: RouteIndex) -> str:
    """The corpus agent (the knowledge base) when no agent's words matched but the request speaks the domain.

    "What is the warranty period of Huawei inverters?": most of its words are words the agents
    and the corpus use (warranty, period, inverter), so it is a question of the domain the
    corpus may not answer — the knowledge agent then says it does not know, honestly; "公司年假怎么休"
    shares no such words and stays out of scope. A request that names the domain itself (a word
    every agent's title or description uses: "光伏") beside other words is the domain's too.
    """
    corpus = next((n for n, s in specs.items() if s.vocabulary is not None), "")
    known, total = index.known_terms(query)
    if known >= 2 and known >= DOMAIN_SHARE * total:
        return corpus
    # a request naming the domain itself ("光伏支架用铝合金还是镀锌钢好") about something more
    named = {t for t in index.terms(query) if len(t) > 1} & index.domain_terms
    return corpus if named and total >= 2 else ""


def _continued(query: str, specs: Mapping[str, AgentSpec], results: Results) -> str | None:
    """The agent of the conversation's newest result when the request is a value only its parser reads.

    "and for 12%?" after a reverse optimisation: no producer reads a bare percentage, the agent that
    solved the last target does (a new value for it); the words name nothing, the newest work does.
    """
    produced = {kind for spec in specs.values() for kind in spec.produces}
    newest = next((r.kind for r in results.recent(limit=20) if r.kind in produced), None)
    for name, spec in specs.items():
        if newest in spec.produces and spec.consumes and spec.parse_answer(query):
            return name
    return None


def _values_ask_for(
    producer: str,
    values: Mapping,
    query: str,
    specs: Mapping[str, AgentSpec],
    index: RouteIndex,
    existing: set[str],
) -> bool:
    """Whether stated values alone ask `producer` to run.

    Yes when it has a result to change, several values are given, or some word of the request is
    one of its words; a lone place with nothing else ("明天去北京的机票") is not a calculation.
    """
    if set(specs[producer].produces) & existing or len(values) >= 2:
        return True
    scores = index.scores(query)
    return any(r.name == producer and scores[i] >= 1.0 for i, r in enumerate(index.routes))


def _from_template(
    template: Route,
    asked: Sequence[str],
    specs: Mapping[str, AgentSpec],
    stated: Mapping[str, dict],
    existing: set[str],
    lang: str,
) -> Understanding:
    """The template's steps as written, plus any other agent the words asked for.

    With nothing new stated, leading producer steps whose result the conversation already holds
    are left out (their dependents then use that result).
    """
    steps = [dict(s) for s in template.steps if s["agentName"] in specs]
    names = {s["agentName"] for s in steps}
    extra = compose([a for a in asked if a not in names], specs)
    offset = len(steps)
    steps += [
        {**s, "seqNo": s["seqNo"] + offset, "dependsOn": [d + offset for d in s["dependsOn"]]} for s in extra
    ]
    if not stated:
        consumed = {k for s in steps for k in specs[s["agentName"]].consumes}
        held = consumed & existing
        drop = {
            s["seqNo"]
            for s in steps
            if not specs[s["agentName"]].consumes and set(specs[s["agentName"]].produces) & held
        }
        steps = _without(steps, drop)
    return Understanding(lang, steps=steps, note=f"workflow {template.name}")


def _without(steps: list[dict], drop: set[int]) -> list[dict]:
    """`steps` minus the dropped seqNos, renumbered from 0 with dependencies rewired."""
    kept = [s for s in steps if s["seqNo"] not in drop]
    renumber = {s["seqNo"]: i for i, s in enumerate(kept)}
    return [
        {
            **s,
            "seqNo": renumber[s["seqNo"]],
            "dependsOn": [renumber[d] for d in s["dependsOn"] if d in renumber],
        }
        for s in kept
    ]


def _asks_for_goal(
    template: Route, named: set[str], specs: Mapping[str, AgentSpec], index: RouteIndex
) -> bool:
    """Whether the words ask for what a template ends in (a step no other step of it depends on).

    A template is a shortcut to its goal ("敏感性分析报告" ends in the report, made from the steps
    before it): when its own texts name the goal by a word ("报告") and the request names only a
    step on the way ("做个敏感性分析"), the request is that step's. A template whose texts do not
    name its goal ("三个并行会合") is taken as its texts say.
    """
    needed = {d for s in template.steps for d in s["dependsOn"]}
    goals = {s["agentName"] for s in template.steps if s["seqNo"] not in needed}
    if goals & named or not named:
        return True
    among = [i for i, r in enumerate(index.routes) if not r.is_template and r.name in specs]
    said = {
        index.routes[i].name
        for text in template.texts
        for i in index.named_by_terms(text, TERM_SHARE, among, among)
    }
    return not goals & said


def _template(query: str, index: RouteIndex) -> Route | None:
    """The workflow template one of whose texts says (nearly) what the whole request says, or None."""
    closeness = index.closeness(query)
    best = max(range(len(closeness)), key=lambda i: (closeness[i], -i), default=None)
    if best is None or closeness[best] < TEMPLATE_CLOSENESS or not index.routes[best].is_template:
        return None
    return index.routes[best]


def _best_agent(clause: str, specs: Mapping[str, AgentSpec], index: RouteIndex, floor: float) -> str | None:
    """The agent whose description or examples a clause matches best (≥ `floor`), if any.

    Templates and agents that recognise their requests structurally (`claims`) are not named by words.
    """
    scores = index.scores(clause)
    titled = index.in_titles(clause)
    # near a tie, the agent whose title uses the word ("测算" in 光伏经济性测算) before one whose examples do
    ranked = sorted(
        (i for i, r in enumerate(index.routes) if not r.is_template and r.name in specs),
        key=lambda i: -scores[i] * (TITLE_WEIGHT if titled[i] else 1.0),
    )
    if _is_question(clause):
        # a question its structure did not claim ("can C&I projects still sell all their power?")
        # is not that agent's work; the next agent its words fit may be
        ranked = [i for i in ranked if specs[index.routes[i].name].claims is None]
    if not ranked or not scores[ranked[0]]:
        return None
    if specs[index.routes[ranked[0]].name].vocabulary is not None:
        # matched against a whole corpus's titles, one common word ("一次") is an accident; one of
        # the terms the corpus declares ("绿证" in a note's tags) is not
        declared = index.shares_declared(clause)[ranked[0]]
        if index.shared_terms(clause)[ranked[0]] < 2 and not declared:
            return None
        # a question about a situation it states (values: "can C&I projects still sell all their power
        # to the grid?") with three words only the corpus uses is no accident either: it needs no more
        # than any clause ("Would solar panels on our roof pay off?" states no values: higher floor)
        used = index.used_by(clause)
        theirs = set().union(
            *(
                used[i]
                for i, r in enumerate(index.routes)
                if r.name in specs and specs[r.name].vocabulary is None
            )
        )
        situation = _is_question(clause) and _states_values(clause, specs)
        if not declared and not (situation and len(used[ranked[0]] - theirs) >= 3):
            floor = max(floor, 2 * CLAUSE_FLOOR)
    if scores[ranked[0]] < floor and index.closeness(clause)[ranked[0]] < TEMPLATE_CLOSENESS:
        return None  # weak, unless the clause says nearly what one of the agent's examples says
    workers = [i for i in ranked if specs[index.routes[i].name].vocabulary is None]  # not a corpus's words
    if not titled[ranked[0]] and ranked[0] in workers and specs[index.routes[ranked[0]].name].claims is None:
        alike = _alike(workers, index.used_by(clause))
        if len(alike) > 1:
            # words several agents use alike name the one the others build on ("这个项目的IRR能到多少":
            # the calculation's figure), or none ("compute the base case": every consumer's object)
            names = [index.routes[i].name for i in alike]
            first = [n for n in names if n in _producers(specs)]
            return first[0] if first and specs[first[0]].claims is None else None
    top = index.routes[ranked[0]].name
    return top if specs[top].claims is None else None  # it names itself by structure, or not at all


def _alike(ranked: Sequence[int], used: Sequence[set[str]]) -> list[int]:
    """The best route and every other whose texts use all the words of the clause the best one uses.

    When there are several, no word of the clause sets the best route apart ("case", "IRR"): the
    clause names work only by its title's word or by a word of one agent's own.
    """
    best = used[ranked[0]]
    if not best:
        return [ranked[0]]
    return [i for i in ranked if best <= used[i]]


def _corpus_rival(clause: str, chosen: str, specs: Mapping[str, AgentSpec], index: RouteIndex) -> str:
    """A corpus agent whose texts a question without values fits nearly as well as `chosen`'s ('' if none).

    "What documents do I need to register a rooftop solar project?" shares words with the
    calculation's examples and with the knowledge base's titles alike; the words cannot tell,
    the knowledge base's documents can (the planner asks `AgentSpec.serves`).
    """
    scores = index.scores(clause)
    shared = index.shared_terms(clause)
    top = max((scores[i] for i, r in enumerate(index.routes) if r.name == chosen), default=0.0)
    for i, route in enumerate(index.routes):
        spec = specs.get(route.name)
        if (
            spec is not None
            and route.name != chosen
            and not route.is_template
            and spec.vocabulary is not None
            and spec.serves is not None
            and shared[i] >= 2
            and scores[i] >= RIVAL_SHARE * top
        ):
            return route.name
    return ""


def _about_the_project(
    clause: str, corpus: str, query: str, specs: Mapping[str, AgentSpec], index: RouteIndex
) -> str:
    """The producer, not the corpus, when the request states a whole project and the clause fits both.

    "For a 4 MW industrial rooftop in Ningbo, what are the payback period and LCOE?" asks for the
    figures of the project it states; its words fit the calculation's texts and a note's tags
    nearly alike (`RIVAL_SHARE`), and the stated project decides.
    """
    scores = index.scores(clause)
    top = max((scores[i] for i, r in enumerate(index.routes) if r.name == corpus), default=0.0)
    # a question that states the whole project itself and names nothing only the corpus speaks of (a
    # unit is no topic): "How much would a 6 kW rooftop system on my house in Beijing make?"
    used = _used(clause, index)
    for name in _complete_project(clause, specs):
        if not {w for w in used.get(corpus, set()) - used.get(name, set()) if not neutral(w)}:
            return name
    for name in _complete_project(query, specs):
        best = max((scores[i] for i, r in enumerate(index.routes) if r.name == name), default=0.0)
        if best >= RIVAL_SHARE * top:
            return name
    return corpus


def _complete_project(clause: str, specs: Mapping[str, AgentSpec]) -> list[str]:
    """The producer whose every required input a clause states on its own (a new project to compute).

    "Work out the numbers for a 600 kW commercial plant in Hefei, and also: can …?" asks for the
    calculation although none of its words is the calculation's; a clause of fewer values ("换成户用")
    is a change to the conversation's case, decided after all clauses are read.
    """
    stated = _inputs_stated(clause, specs)
    return [
        name
        for name, fields in stated.items()
        if all(f.name in fields for f in specs[name].inputs if f.required)
    ][:1]


def _joined(clause: str, specs: Mapping[str, AgentSpec], index: RouteIndex) -> list[str]:
    """Agents the parts of a clause joined by "和" / "and" name on their own ("…的投资回报和电价波动的影响").

    A part that states values names nothing here, nor does one naming a corpus agent (the knowledge
    base) unless it asks a question of its own ("… and tell me whether there are still subsidies").
    """
    parts = [p.strip() for p in _JOIN.split(clause) if p and p.strip()]
    if len(parts) < 2:
        return []
    found = []
    for part in parts:
        if _states_values(part, specs):
            continue
        name = _best_agent(part, specs, index, CLAUSE_FLOOR)
        # a corpus agent (the knowledge base) only for a part that asks a question of its own
        if name and (specs[name].vocabulary is None or _is_question(part)):
            found.append(name)
    return found


def _also_named(clause: str, specs: Mapping[str, AgentSpec], index: RouteIndex) -> list[str]:
    """Agents a word of the clause names on its own ("敏感性和报告", "economics and a report").

    One clause can ask for several things joined by "和", "+", "and" or nothing at all; each word
    that only one agent's texts use names that agent. Agents that recognise their requests by
    structure (`claims`) or whose texts are a corpus's vocabulary (the knowledge base) are not
    named by one word.
    """
    among = [i for i, r in enumerate(index.routes) if not r.is_template and r.name in specs]
    eligible = [
        i
        for i in among
        if specs[index.routes[i].name].claims is None and specs[index.routes[i].name].vocabulary is None
    ]
    found = index.named_by_terms(clause, TERM_SHARE, among, eligible)
    return [index.routes[i].name for i in found]


def compose(names: Sequence[str], specs: Mapping[str, AgentSpec]) -> list[dict]:
    """Steps in the given order, each after the steps producing what it consumes (and depending on them)."""
    ordered: list[str] = []
    pending = list(names)
    while pending:  # stable: the first name whose producers among the rest are already placed
        ready = next(
            (
                n
                for n in pending
                if not any(set(specs[n].consumes) & set(specs[m].produces) for m in pending if m != n)
            ),
            pending[0],
        )
        ordered.append(ready)
        pending.remove(ready)
    steps: list[dict] = []
    for seq, name in enumerate(ordered):
        wants = set(specs[name].consumes)
        deps = [s["seqNo"] for s in steps if wants & set(specs[s["agentName"]].produces)]
        steps.append({"seqNo": seq, "agentName": name, "requirement": "", "dependsOn": deps})
    return steps


def _recall(query: str, specs: Mapping[str, AgentSpec], results: Results, lang: str) -> str:
    for spec in specs.values():
        if spec.recall is None:
            continue
        for kind in spec.produces:
            found = _which(query, kind, results)
            if found is not None and (answer := spec.recall(query, found, lang)):
                return answer
    return ""


def _which(query: str, kind: str, results: Results) -> dict | None:
    """The headline of the result of `kind` a question is about: the newest, unless it points earlier.

    "第一次算的IRR" / "the original NPV" → the conversation's first; "改之前的回收期" / "before the
    change" → the one before the newest. The headline then says which (`which`: first / before).
    """
    latest = results.latest(kind)
    if latest is None:
        return None
    wanted = "before" if _BEFORE_LATEST.search(query) else "first" if _FIRST.search(query) else ""
    if not wanted:
        return latest.headline
    older = [r for r in results.recent(limit=200) if r.kind == kind]  # newest first
    if len(older) < 2:
        return latest.headline
    return {**(older[1] if wanted == "before" else older[-1]).headline, "which": wanted}


def out_of_scope(specs: Mapping[str, AgentSpec], lang: str) -> str:
    """A short honest reply: this is outside what the agents do, and what they do."""
    names = [_title(s.title, lang) for s in specs.values()]
    if lang == "en":
        return "Sorry, that is outside what I can help with. I can: " + "; ".join(names) + "."
    return "抱歉，这个问题超出了我能处理的范围。我可以：" + "；".join(names) + "。"


def _title(head: str, lang: str) -> str:
    """The part of an agent's title in `lang` ("光伏经济性测算 PV economic calculation")."""
    latin = " ".join(re.findall(r"[A-Za-z][A-Za-z &/-]*[A-Za-z]", head)).strip()
    chinese = "".join(_CJK.findall(head)) or head
    return (latin or head) if lang == "en" else chinese
