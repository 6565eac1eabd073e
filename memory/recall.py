"""Message-level lexical evidence: each message scored with its neighbours (a sliding window).

A hit costs the tokens of its text, so search ranks single messages (*units*) rather than whole
blocks. A message alone often lacks the question's words ("Yes, 4.2 %" answers "what loan rate
did the bank offer?"), so its lexical score is its own BM25 plus `window_weight` × the BM25 of
each adjacent message and `window_weight2` × the messages two away (by sequence, across block
borders within a conversation): the benefit of windows without paying their tokens.
"""

from __future__ import annotations

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
) -> dict[Unit, float]:
    """Windowed BM25 of the best `unit_candidates` messages and their neighbours (caller holds the lock).

    `cross_block=False` keeps windows inside a block (long-term facts come from many conversations).
    """
    keys = None
    if todo_id is not None:
        keys = {u for b, t in state.todo_of.items() if t == todo_id for u in state.units_of.get(b, [])}
    acc, top = state.units.dense(terms, settings.unit_candidates, keys)
    if not top:
        return {}
    slot_of = state.units.slot_of
    matched = set(top)

    def own(unit: Unit) -> float:
        # Okapi idf is 0 or negative for a term in half the documents of a tiny corpus; a match
        # must still count as evidence, so a matching message scores at least 1e-3.
        slot = slot_of(unit)
        if slot is None:
            return 0.0
        return max(float(acc[slot]), 1e-3) if slot in matched else float(acc[slot])

    weights = ((1, settings.window_weight), (2, settings.window_weight2))
    found: set[Unit] = set()
    for slot in top:
        unit = state.units.key_of(slot)
        assert unit is not None
        found.add(unit)  # type: ignore[arg-type]
        for distance, weight in weights:
            if weight:
                found.update(_neighbours(state, unit, distance, cross_block))  # type: ignore[arg-type]
    out: dict[Unit, float] = {}
    for unit in found:
        if keys is not None and unit not in keys:
            continue
        score = own(unit)
        for distance, weight in weights:
            if weight:
                score += weight * sum(own(n) for n in _neighbours(state, unit, distance, cross_block))
        if score > 0:
            out[unit] = score
    return out


def expansion_terms(
    state: NamespaceState, lexical: dict[Unit, float], terms: list[str], settings: MemorySettings
) -> list[str]:
    """Query expansion from the conversation itself (pseudo-relevance feedback).

    The best `expansion_docs` messages and their neighbours say what the question is about in
    the conversation's own words: a name, a model, a place. Their rarest terms (highest idf, not
    already asked) are searched as a second query, which reaches turns that share no word with
    the question but name the same thing ("Siamese" → the adoption turn → "Mochi" → the vet visit).
    """
    best = sorted(lexical, key=lambda u: (-lexical[u], u))[: settings.expansion_docs]
    pool: set[Unit] = set(best)
    for unit in best:
        pool.update(_neighbours(state, unit, 1, True))
    asked = set(terms)
    weight: dict[str, float] = {}
    for unit in pool:
        for term in state.units.terms_of(unit):
            if term not in asked and len(term) > 1:
                weight[term] = weight.get(term, 0.0) + state.units.idf(term)
    ranked = sorted(weight, key=lambda t: (-weight[t], t))
    return ranked[: settings.expansion_terms]
