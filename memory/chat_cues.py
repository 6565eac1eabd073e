"""Two signals of short chat turns, derived from a message's stored search terms.

* **Characters of Chinese words** (`char_terms`): chat Chinese says one thing with different words
  that share a character — 月薪 / 调薪, 拔牙 / 牙医, 度数 / 三百五十度, 结婚 / 婚礼 — where jieba's
  words, their bigrams and 词林's classes all miss. Each message is also indexed by the distinct
  characters of its Chinese words (a weak, separate BM25 index: `MemorySettings.char_weight`);
  a rare character is strong evidence, a common one weak, as BM25's idf decides.
* **Corrections** (`corrects`): "说错了，牙医是下周一", "wait no, I misread, it's Thursday" revise
  what was said just before and are the newest statement of that value, yet often repeat none of
  the question's words. A message that corrects takes a share of the turns before it
  (`MemorySettings.correction_weight`, `memory.recall`), as an answer takes its question's.

Both are read from the terms already stored per message, so stores written before get them on
open.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["char_terms", "corrects", "query_chars"]

_CJK_WORD = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+$")
# Characters that carry grammar, not a topic (pieces of 我们, 这个, 什么 …); never char terms.
_CHAR_STOP = frozenset(
    "的 了 是 在 我 你 他 她 它 们 有 就 不 也 都 很 这 那 个 一 吗 呢 吧 啊 么 和 与 被 把 给 还 又 再 才 "
    "要 会 能 得 地 着 过 没 说 去 来 到 上 下 里 中 多 少 几 哪 什 怎 啥 谁 为 之 以 其 而 并 或 对 等 "
    "好 点 些 样 种 后 前 时 天 今 明 年 月 日 号 周".split()
)
# Words that revise what was just said. Chinese: a verb + 错 / 岔 ("说错了", "看岔了", "记错") or a
# correction noun; English: the words such a turn is made of ("I misread", "typo", "I meant").
_ZH_CORRECTION = re.compile(r"[说看记搞弄写打听算读]错|[看记听]岔|[记听看]成|口误|更正|纠正|不对不对")
_ZH_CORRECTION_WORDS = frozenset({"错", "岔"})  # what is left of 看错 / 看岔 once the stop word 看 is out
_EN_CORRECTION = frozenset("misread misremembered mistyped typo correction meant oops".split())


def char_terms(terms: Iterable[str]) -> list[str]:
    """The distinct characters of a message's Chinese words (2+ characters), grammar characters left out."""
    seen: dict[str, None] = {}
    for term in terms:
        if len(term) >= 2 and _CJK_WORD.match(term):
            for ch in term:
                if ch not in _CHAR_STOP:
                    seen[ch] = None
    return list(seen)


def query_chars(terms: Iterable[str], skip: frozenset[str]) -> list[str]:
    """A question's character terms: those of its words that are not in `skip` (question words)."""
    return char_terms(t for t in terms if t not in skip)


def corrects(terms: Iterable[str]) -> bool:
    """Whether a message (by its search terms) corrects something said before it."""
    terms = list(terms)
    if any(t in _EN_CORRECTION or t in _ZH_CORRECTION_WORDS for t in terms):
        return True
    return bool(_ZH_CORRECTION.search("".join(t for t in terms if _CJK_WORD.match(t))))
