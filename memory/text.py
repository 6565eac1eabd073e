"""Language-aware tokenisation shared by BM25 indexes: jieba for Chinese, words for English."""

from __future__ import annotations

import re
import threading
from functools import cache, lru_cache

__all__ = ["QUESTION_WORDS", "ZH_STOP", "cjk_ratio", "search_terms", "stem_terms", "tokenize"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9][a-z0-9_.:/\-]*[a-z0-9]|[a-z0-9]")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_jieba_lock = threading.Lock()

_EN_STOP = frozenset(
    """a an the and or but if then else of to in on at by for with from as is are was were be been being
    it its this that these those i you he she we they me my your our their what which who whom how why
    when where do does did done have has had not no so than too very can could should would will shall
    just about into over under again also there here all any each few more most other some such only own
    same up down out off s t please""".split()
)
ZH_STOP = frozenset(
    "的 了 和 是 在 我 有 就 不 人 都 一 上 也 很 到 说 要 去 你 会 着 没有 看 好 自己 这 那 吗 呢 吧 啊 把 被 让 给 与 及 或 并 对 中 为 之 请 帮 帮我 一下 一份 进行".split()
)


def cjk_ratio(text: str) -> float:
    """Share of non-space characters that are CJK ideographs (0.0 for empty text)."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    return sum(1 for c in chars if _CJK.match(c)) / len(chars)


@cache
def _jieba():  # noqa: ANN202 - jieba has no types
    """Jieba's default tokenizer, its dictionary read on demand (memory._jieba_freq), once per process."""
    from memory._jieba_freq import jieba_tokenizer

    with _jieba_lock:
        return jieba_tokenizer()


def tokenize(text: str) -> list[str]:
    """Split text into BM25 terms: jieba words for CJK runs, lowercase words for the rest.

    Stop words and punctuation are dropped; digits with units survive ("500kw", "0.85").
    """
    lowered = text.lower()
    tokens: list[str] = []
    pos = 0
    for run in _CJK_RUN.finditer(lowered):
        tokens.extend(_latin(lowered[pos : run.start()]))
        for word in _jieba().lcut(run.group(), HMM=False):
            if word not in ZH_STOP and word.strip():
                tokens.append(word)
        pos = run.end()
    tokens.extend(_latin(lowered[pos:]))
    return tokens


def _latin(segment: str) -> list[str]:
    return [w for w in _WORD.findall(segment) if w not in _EN_STOP]


_ALPHA = re.compile(r"^[a-z]{4,}$")
_stem_lock = threading.Lock()


@cache
def _stemmer():  # noqa: ANN202 - snowballstemmer has no types
    from snowballstemmer.english_stemmer import EnglishStemmer  # the English module alone

    return EnglishStemmer()


@lru_cache(maxsize=1 << 16)
def _stem(term: str) -> str:
    if not _ALPHA.match(term):
        return term
    with _stem_lock:  # a snowball stemmer keeps its state in the object while it works
        return str(_stemmer().stemWord(term))


def stem_terms(terms: list[str]) -> list[str]:
    """English words (letters only, 4+) by their Snowball stem ("travelled" → "travel", "cities" → "citi").

    Other terms (Chinese words, numbers, codes) stay as they are. Applied when a namespace's
    messages are indexed (from the stored terms, so stores need no rewrite) and to the question.
    """
    return [_stem(t) for t in terms]


def search_terms(text: str) -> list[str]:
    """BM25 terms: `tokenize(text)` plus the character bigrams of CJK words of 3+ characters.

    jieba segments the same phrase differently in a statement and in a question ("年发电量" vs
    "发电", "管理模式" vs "模式"), so longer words also contribute their bigrams. On the Chinese
    paraphrase set, plain words, these bigrams and bigrams of whole CJK runs score the same
    (docs/memory.md, "Which Chinese terms"); the word bigrams are kept for such partial matches.
    """
    terms = tokenize(text)
    extra: list[str] = []
    for term in terms:
        if len(term) >= 3 and all(_CJK.match(ch) for ch in term):
            extra.extend(term[i : i + 2] for i in range(len(term) - 1))
    return terms + extra


# Words that shape a question but say nothing about its topic; they never count against coverage.
QUESTION_WORDS = frozenset(
    "怎么 怎样 怎么样 如何 什么 哪些 哪个 哪里 多少 几 是否 能否 可否 可以 能 吗 呢 需要 需 要求 有没有 "
    "有 请问 问 一下 现在 目前 我们 我家 咱们 他们 应该 一般 具体 规定 知道 告诉 介绍 解释 说明 问题 "
    "想 了解 关于 相关 哪 哪几 哪类 哪种 几类 几种 几个 哪几类 哪几种 为什么 么 还 算 呀 多 大 能不能 可不可以 what how why which when is are do does".split()
)
