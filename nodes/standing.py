"""standing: which of a user's words become long-term facts (seed 004's long-term tier).

A request may state something meant to hold beyond it: "我们的电价是0.72", "以后报告都用英文",
"from now on use 8% discount rate". Such a statement becomes a fact of the user
(`memory.facts`, per user, across conversations): injected into every disclosed window's system
message, and applied — a value replaces that field's default in later calculations, a language
becomes the one the named agent writes in — always with a note saying so.

The rule (offline; no list of sentences): a clause of the request is standing when it is not a
question, its sentence carries a time-persistence cue (以后, 今后, 默认, from now on, always, by
default …) or the clause itself names the user as owner (我们的, 我的, 我司, our, my …), and it
states either a value that an agent's own parser reads for one of the inputs the agent otherwise
defaults (`AgentSpec.defaults`: a tariff, a discount rate, not a project's place or size), or a
language named as the one to write in (`tools.lang.named_language`). With a model configured,
the model judges importance instead, for the sentences that have a cue and state such a value, a
language or an explicit "记住" / "remember": it answers which parts are lasting facts about the
user (a one-off value is not); values and languages are still read by the same parsers, and a
lasting fact with no readable value is kept as a note (prompt only). A failing model call falls
back to the rule.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from nodes.kit.registry import AgentSpec
from nodes.routing import RouteIndex
from tools.faults import model_errors
from tools.lang import detect_language, named_language

__all__ = [
    "JUDGE_PROMPT",
    "Statement",
    "acknowledge",
    "judge",
    "judge_with_model",
    "leftover",
    "refusal",
    "refused",
    "standing_sentences",
]

log = logging.getLogger("plangraph.memory")

_SENTENCES = re.compile(r"(?<=[。！!；;\n])|(?<=[.?？])\s+")
_CLAUSES = re.compile(r"[，,、：:]")
_PERSIST = re.compile(
    r"以后|今后|往后|此后|从现在起|从现在开始|从今以后|默认|一律|一直|始终|每次|"
    r"\b(?:from now on|going forward|in (?:the )?future|from here on|henceforth|always|by default|"
    r"every time|for all (?:future )?(?:reports|calculations|projects))\b",
    re.IGNORECASE,
)
_OWNER = re.compile(
    r"我们的|我的|我司|我们公司|我们厂|我们这边|我们这里|我家|本公司|咱们|\b(?:our|my)\b|\bwe (?:pay|use|get|have)\b",
    re.IGNORECASE,
)
_REMEMBER = re.compile(r"记住|别忘|\b(?:remember|keep in mind|note that)\b", re.IGNORECASE)
_QUESTION = re.compile(
    r"[吗么呢][\s?？]*$|[?？]\s*$|^\s*(?:can|could|is|are|does|do|what|how|why|which)\b", re.I
)
_LANG_NAMES = {"zh": ("中文", "Chinese"), "en": ("英文", "English")}

JUDGE_PROMPT = """判断用户这句话里有没有需要长期记住的、关于用户本人的事实或偏好：以后的请求和会话里仍然成立的
（例如“我们的电价是0.72”、“以后报告都用英文”、“from now on use 8% discount rate”）。
只针对这一次请求的参数（“这次按500kW算”、“电价改成0.8再算一次”）不算。
只输出 JSON：{"remember": [{"quote": "原文中表达该事实的片段（逐字摘抄）", "about": "用一句话写出该事实"}]}，
没有就输出 {"remember": []}。"""


@dataclass
class Statement:
    """One long-term fact read from a request: key, value, how it reads, the words it came from."""

    key: str
    value: Any
    text: str
    said: str
    scope: tuple[str, ...] = ()
    judged_by: str = "rule"
    importance: float = field(default=1.0)
    problem: str = ""  # what is wrong with the value (the agent's `check`): named back, never kept


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s and s.strip()]


def standing_sentences(text: str) -> list[str]:
    """Sentences of `text` with a persistence or owner cue (their question clauses state nothing)."""
    return [s for s in _sentences(text) if _PERSIST.search(s) or _OWNER.search(s)]


def _cue_only(clause: str) -> bool:
    """A clause that is only the cue ("从现在起", "以后"): part of the statement that follows it."""
    rest = _OWNER.sub(" ", _PERSIST.sub(" ", clause))
    return not re.sub(r"[\W_]+", "", rest)


def _read(
    sentence: str, specs: Mapping[str, AgentSpec], index: RouteIndex | None, judged_by: str
) -> list[Statement]:
    """Values of defaulted inputs and a named language in `sentence`, each with the clauses saying it.

    By rule a clause counts when the sentence has a persistence cue, or the clause itself (or a
    cue-only clause before it) names the user as owner: in "我的项目在杭州，电价0.8元/度" the
    tariff is this project's. The model's quotes are taken as judged.
    """
    parts = [c.strip() for c in _CLAUSES.split(sentence) if c.strip()]
    found: dict[str, Statement] = {}
    cue = [p for p in parts if _cue_only(p)]
    lasting = judged_by == "model" or bool(cue) or bool(_PERSIST.search(sentence))
    lang_of_text = detect_language(sentence)
    for part in parts:
        if _QUESTION.search(part) or not (lasting or _OWNER.search(part)):
            continue
        for spec in specs.values():
            if not spec.defaults:
                continue
            for key, value in spec.parse_answer(part).items():
                if key not in spec.defaults or isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                shown = spec.show(key, value, lang_of_text) if spec.show else f"{key} = {value:g}"
                problem = spec.check(key, value, lang_of_text) if spec.check else ""
                found.setdefault(
                    key,
                    Statement(
                        key, value, shown, "，".join([*cue, part]), judged_by=judged_by, problem=problem
                    ),
                )
        lang = named_language(part)
        if lang is not None and "lang" not in found:
            scope = _named_agents(part, specs, index)
            if lang_of_text == "en":
                text = f"{', '.join(scope) if scope else 'all answers'} in {_LANG_NAMES[lang][1]}"
            else:
                text = f"{'、'.join(scope) + ' 的输出' if scope else '所有回答'}使用{_LANG_NAMES[lang][0]}"
            found["lang"] = Statement("lang", lang, text, "，".join([*cue, part]), tuple(scope), judged_by)
    return list(found.values())


def _named_agents(clause: str, specs: Mapping[str, AgentSpec], index: RouteIndex | None) -> list[str]:
    """Agents a word of `clause` names on its own ("报告" → report); none: the preference is general."""
    if index is None:
        return []
    among = [i for i, r in enumerate(index.routes) if not r.is_template and r.name in specs]
    return [index.routes[i].name for i in index.named_by_terms(clause, 0.7, among, among)]


def judge(text: str, specs: Mapping[str, AgentSpec], index: RouteIndex | None = None) -> list[Statement]:
    """The long-term facts `text` states, by the rule (see the module docstring); impossible values left out."""
    return [st for st in _stated(text, specs, index) if not st.problem]


def refused(text: str, specs: Mapping[str, AgentSpec], index: RouteIndex | None = None) -> list[Statement]:
    """Standing statements of `text` whose value its agent's `check` refuses ("以后电价都按-1元/度算")."""
    return [st for st in _stated(text, specs, index) if st.problem]


def _stated(text: str, specs: Mapping[str, AgentSpec], index: RouteIndex | None) -> list[Statement]:
    return [st for sentence in standing_sentences(text) for st in _read(sentence, specs, index, "rule")]


def refusal(statements: Sequence[Statement], lang: str) -> str:
    """The reply to standing statements with impossible values: what is wrong, that nothing was kept, what to do."""
    if lang == "en":
        lines = [f"- {st.problem} (you said “{st.said}”)" for st in statements]
        return "\n".join(
            [
                "I did not keep this as a standing value:",
                *lines,
                "Please say it again with a plausible value; nothing was stored or calculated.",
            ]
        )
    lines = [f"- {st.problem}（您说的是“{st.said}”）" for st in statements]
    return "\n".join(["没有记为长期设置：", *lines, "请改正后再说一次；没有保存任何内容，也没有进行测算。"])


def judge_with_model(
    model: BaseChatModel, text: str, specs: Mapping[str, AgentSpec], index: RouteIndex | None = None
) -> list[Statement]:
    """The long-term facts `text` states, importance judged by `model` (the rule when the call fails).

    Only sentences with a persistence or owner cue that also state a readable value, a language
    or an explicit "记住" / "remember" are asked about (no call otherwise).
    """
    sentences = [s for s in standing_sentences(text) if _REMEMBER.search(s) or _read(s, specs, None, "model")]
    if not sentences:
        return []
    failures: tuple[type[Exception], ...] = (*model_errors(), ValueError)  # a failed call, or not the JSON
    try:
        reply = model.invoke(
            [SystemMessage(JUDGE_PROMPT), HumanMessage("\n".join(sentences))], config={"tags": ["nostream"]}
        )
        picked = _parse(reply.text)
    except failures as error:
        log.warning("long-term facts judged by rule: the model failed (%s: %s)", type(error).__name__, error)
        return judge(text, specs, index)
    found: dict[str, Statement] = {}
    for quote, about in picked:
        statements = _read(quote, specs, index, "model") or [
            Statement(f"note:{about[:40]}", about, about, quote, judged_by="model", importance=0.6)
        ]
        for st in statements:
            found.setdefault(st.key, st)
    return [st for st in found.values() if not st.problem]


def _parse(text: str) -> list[tuple[str, str]]:
    """(quote, about) pairs from the judge's JSON answer; ValueError when it is not that JSON."""
    start, end = text.find("{"), text.rfind("}")
    data = json.loads(text[start : end + 1]) if start >= 0 < end else None
    if not isinstance(data, dict) or not isinstance(data.get("remember"), list):
        raise ValueError(f"not the judge's JSON: {text[:80]!r}")
    return [
        (str(item.get("quote") or item.get("about")), str(item.get("about") or item.get("quote")))
        for item in data["remember"]
        if isinstance(item, dict) and (item.get("quote") or item.get("about"))
    ]


def leftover(request: str, said: Sequence[str]) -> str:
    """`request` without the clauses stated as facts: what it still asks for ("" = nothing)."""
    rest = request
    for words in said:
        for clause in words.split("，"):
            if clause:
                rest = rest.replace(clause, " ")
    return rest if re.sub(r"[\W_]+", "", rest) else ""


def acknowledge(facts: Sequence[Any], lang: str) -> str:
    """The reply to a request that only stated long-term facts: what is kept and how to see or drop it."""
    lines = [f"- {f.text}（{f.fact_id}）" if lang != "en" else f"- {f.text} ({f.fact_id})" for f in facts]
    if lang == "en":
        return "\n".join(
            [
                "Noted. I will use this in this and later conversations (a value you give in a request still wins):",
                *lines,
                "See them with `plangraph memory facts` (HTTP GET /memory/facts); "
                "remove one with `plangraph memory forget <id>` (DELETE /memory/facts/<id>).",
            ]
        )
    return "\n".join(
        [
            "好的，已记住，本次和以后的会话都会用到（某次请求自己给出的值仍然优先）：",
            *lines,
            "查看：plangraph memory facts（HTTP：GET /memory/facts）；删除：plangraph memory forget <编号>"
            "（DELETE /memory/facts/<编号>）。",
        ]
    )
