"""Words as a corpus declares them: memory's tokenisation, with the corpus's own terms kept whole.

jieba cuts domain words it does not know into single characters ("户用" → 户 + 用, "绿证" → 绿 +
证), and single characters match anything. A corpus declares its terms (a note's tags, the values
an agent's inputs take), so routing and the knowledge ranker segment with them: a `TermTokenizer`
has a jieba tokenizer of its own with the terms as user words (jieba's `add_word`, the frequency
jieba suggests so that the term is cut out whole where the sentence allows it). Memory's
tokenizer and its stored search terms are left as they are: words that are not terms go through
`memory.text.tokenize` unchanged.

A term of three or more characters also yields the words jieba cuts it into ("分布式光伏" →
分布式光伏, 分布式, 光伏), so text that says only a part still matches; a term's single characters
are dropped.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from memory.text import tokenize

__all__ = ["TermTokenizer", "declared_terms", "term_tokenizer"]

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CJK_TERM = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,6}")
_ITEMS = re.compile(r"[,，、;；|/\s]+")


def declared_terms(texts: Iterable[str]) -> frozenset[str]:
    """The Chinese terms listed in `texts`: items of their comma lists of two to six characters.

    A note's tags ("分布式光伏, 分类, 户用, solar PV") or an input's choices ("工商业", "户用");
    longer items are phrases (titles), not terms, and English words are whole already.
    """
    return frozenset(
        item for text in texts for item in _ITEMS.split(text.lower()) if _CJK_TERM.fullmatch(item)
    )


class _Overlay:
    """jieba's word counts (`Tokenizer.FREQ`) with words of our own on top; the base is never written."""

    def __init__(self, base: Any) -> None:
        self._base = base
        self._own: dict[str, int] = {}

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._own:
            return self._own[key]
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._own or key in self._base

    def __getitem__(self, key: str) -> int:
        return self._own[key] if key in self._own else int(self._base[key])

    def __setitem__(self, key: str, value: int) -> None:
        self._own[key] = value


class TermTokenizer:
    """`memory.text.tokenize`, except that the declared `terms` are cut out whole (see the module doc)."""

    def __init__(self, terms: Iterable[str]) -> None:
        self.terms = frozenset(t for t in terms if _CJK_TERM.fullmatch(t))
        self._jieba: Any = None
        self._lock = threading.Lock()

    def tokenize(self, text: str) -> list[str]:
        """BM25 terms of `text`: memory's, with declared terms whole (and their words of 2+ characters)."""
        if not self.terms:
            return tokenize(text)
        lowered = text.lower()
        tokens: list[str] = []
        pos = 0
        for run in _CJK_RUN.finditer(lowered):
            tokens.extend(tokenize(lowered[pos : run.start()]))
            for word in self.cut(run.group()):
                if word in self.terms:
                    tokens.append(word)
                    tokens.extend(part for part in _memory_cut(word) if len(part) > 1 and part != word)
                else:
                    tokens.extend(_memory_cut(word))
            pos = run.end()
        tokens.extend(tokenize(lowered[pos:]))
        return tokens

    def cut(self, run: str) -> list[str]:
        """A run of Chinese characters cut into words, the declared terms among them whole."""
        return [w for w in self._cutter().lcut(run, HMM=False) if w.strip()]

    def _cutter(self) -> Any:
        with self._lock:
            if self._jieba is None:
                import jieba

                from memory.text import _jieba as memory_jieba

                # a tokenizer of its own over the counts memory's reads from disk (read, never
                # written: the terms live in the overlay), so both share what they have looked up
                base = memory_jieba()
                cutter = jieba.Tokenizer()
                cutter.FREQ, cutter.total, cutter.initialized = _Overlay(base.FREQ), base.total, True
                for term in sorted(self.terms):
                    cutter.add_word(term)
                self._jieba = cutter
            return self._jieba


@lru_cache(maxsize=16384)
def _memory_cut(word: str) -> tuple[str, ...]:
    """Memory's tokens of one word (its stop words dropped), once per word."""
    return tuple(tokenize(word))


@lru_cache(maxsize=8)
def term_tokenizer(terms: frozenset[str]) -> TermTokenizer:
    """One `TermTokenizer` per set of terms in a process (its jieba is built on first use)."""
    return TermTokenizer(terms)
