"""Message-level lexical evidence: each message scored with its neighbours (a sliding window).

A hit costs the tokens of its text, so search ranks single messages (*units*) rather than whole
blocks. A message alone often lacks the question's words ("Yes, 4.2 %" answers "what loan rate
did the bank offer?"), so its lexical score is its own BM25 plus `window_weight` × the BM25 of
each adjacent message and `window_weight2` × the messages two away (by sequence, across block
borders within a conversation): the benefit of windows without paying their tokens.
Candidates are the best messages by this windowed score, so an answer that shares no word with
the question is found through the question it answers.
"""

from __future__ import annotations

import numpy as np

from memory._state import NamespaceState, Unit
from memory.types import MemorySettings

__all__ = ["expansion_terms", "unit_lexical"]


def _neighbours(state: NamespaceState, unit: Unit, distance: int, cross_block: bool) -> list[Unit]:
    seq = state.unit_seq.get(unit)
    if seq is None:
        return []
    out = []
    for s in (seq - distance, seq + distance):
        other = state.seq_unit.get(s)
        if other is not None and (cross_block or other[0] == unit[0]):
            out.append(other)
    return out


def unit_lexical(
    state: NamespaceState,
    terms: list[str],
    settings: MemorySettings,
    todo_id: str | None = None,
    cross_block: bool = True,
    at_least: int = 0,
    concepts: dict[str, float] | None = None,
    weights: dict[str, float] | None = None,
    chars: list[str] | None = None,
) -> dict[Unit, float]:
    """Windowed BM25 of the best `unit_candidates` (or `at_least`) messages; the caller holds the lock.

    Messages sit on a line by sequence number, so the window is a few shifted numpy additions.
    `cross_block=False` (long-term facts, gathered from many conversations) scores messages alone.
    `concepts` (thesaurus class terms with weights, `memory.concepts.query_concepts`) add
    `concept_weight` × their BM25 in the class index to each message's own score; `chars` (the
    question's characters, `memory.chat_cues.query_chars`) add `char_weight` × their BM25 in the
    character index. `weights` scales query terms (question words: `question_weight`). A message
    that corrects what was said before it takes `correction_weight` × the best of the three turns
    before it, as an answer takes its question's score.
    """
    keys = None
    if todo_id is not None:
        keys = {u for b, t in state.todo_of.items() if t == todo_id for u in state.units_of.get(b, [])}
    n = max(settings.unit_candidates, at_least)
    if not cross_block:
        acc, top = state.units.dense(terms, n, keys)
        return {state.units.key_of(s): max(float(acc[s]), 1e-3) for s in top}  # type: ignore[misc]
    own = state.units.by_position(terms, state.next_seq, keys, weights)
    if chars and settings.char_weight > 0 and len(state.chars):
        own += settings.char_weight * state.chars.by_position(chars, state.next_seq, keys)
    if concepts and settings.concept_weight > 0 and len(state.concepts):
        own += settings.concept_weight * state.concepts.by_position(concepts, state.next_seq, keys, concepts)
    window = own.copy()
    for distance, weight in ((1, settings.window_weight), (2, settings.window_weight2)):
        if weight and len(own) > distance:
            window[distance:] += weight * own[:-distance]
            window[:-distance] += weight * own[distance:]
    extra = settings.answer_weight - settings.window_weight
    if extra > 0 and state.asking:  # the turn after a question takes more of its words: its answer
        asked = state.asked()
        asked = asked[asked + 1 < len(own)]
        window[asked + 1] += extra * own[asked]
    if settings.correction_weight > 0 and state.correcting:  # "说错了，是下周一": the newest value
        fixes = state.corrections()
        fixes = fixes[(fixes >= 1) & (fixes < len(own))]
        before = np.zeros(len(fixes))
        for distance in (1, 2, 3):
            at = fixes - distance
            ok = at >= 0
            before[ok] = np.maximum(before[ok], own[at[ok]])
        window[fixes] += settings.correction_weight * before
    if keys is not None:
        allowed = np.zeros(len(window), dtype=bool)
        allowed[[state.unit_seq[u] for u in keys if state.unit_seq.get(u, -1) < len(window)]] = True
        window[~allowed] = 0.0
    hits = np.flatnonzero(window > 0)
    if len(hits) > n:
        hits = hits[np.argpartition(-window[hits], n - 1)[:n]]
    out: dict[Unit, float] = {}
    for seq in hits.tolist():
        unit = state.seq_unit.get(seq)
        if unit is not None:
            out[unit] = float(window[seq])
    return out


def expansion_terms(
    state: NamespaceState, lexical: dict[Unit, float], terms: list[str], settings: MemorySettings
) -> list[str]:
    """Query expansion from the conversation itself (pseudo-relevance feedback).

    The best `expansion_docs` messages and their neighbours up to `expansion_reach` turns away
    say what the question is about in the conversation's own words: a name, a model, a place.
    Their words that are rare in the whole conversation (in at most `expansion_df` of its
    messages, at least 3) and not already asked, by summed idf, are searched as a second query,
    which reaches turns that share no word with the question but name the same thing ("Siamese"
    → the adoption turn → two turns later "Mochi" → the vet visit). Without the rarity filter the
    words of the small talk around the best turns drown the bridge (measured, docs/memory.md).
    """
    best = sorted(lexical, key=lambda u: (-lexical[u], u))[: settings.expansion_docs]
    pool: set[Unit] = set(best)
    for unit in best:
        for distance in range(1, settings.expansion_reach + 1):
            pool.update(_neighbours(state, unit, distance, True))
    asked = set(terms)
    weight: dict[str, float] = {}
    said: dict[str, int] = {}
    rare = max(3, int(settings.expansion_df * len(state.units))) if settings.expansion_df > 0 else 0
    for unit in pool:
        for term in state.units.terms_of(unit):
            if term not in asked and len(term) > 1 and (not rare or state.units.df(term) <= rare):
                weight[term] = weight.get(term, 0.0) + state.units.idf(term)
                said[term] = said.get(term, 0) + 1
    ranked = sorted(weight, key=lambda t: (-weight[t], t))
    if settings.expansion_repeat > 1:
        repeated = [t for t in ranked if said[t] >= settings.expansion_repeat]
        if repeated:
            ranked = repeated
    return ranked[: settings.expansion_terms]
