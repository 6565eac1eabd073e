"""The knowledge base's held-out question sets (heldout_2/3/4.jsonl) load and are well formed.

They are only reported (`bench/kb_relevance.py --final`), never searched here; a malformed row (a note
that names no corpus document, an answerable question marked out-of-scope, a typo in a style) would
silently change what the bench reports, so it fails `make test` instead.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.kb_relevance import GROUPS, HELD_OUT, load
from tools.kb.corpus import SHIPPED_KB_DIR

DATA = Path(__file__).resolve().parent / "data"
SETS = {"h2": "heldout_2.jsonl", "h3": "heldout_3.jsonl", "h4": "heldout_4.jsonl"}
STYLES = ("lay", "expert", "oos")


def _rows(prefix: str) -> list[dict[str, Any]]:
    text = (DATA / SETS[prefix]).read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def problems(row: dict[str, Any], prefix: str) -> list[str]:
    """What is wrong with one row of the set whose ids start with `prefix` (empty when well formed)."""
    if set(row) != {"id", "question", "note", "lang", "style", "split"}:
        return [f"keys {sorted(row)}"]
    documents = {p.name for p in SHIPPED_KB_DIR.glob("*.md")}
    wrong = []
    if row["lang"] not in ("zh", "en") or row["style"] not in STYLES:
        wrong.append(f"lang/style {row['lang']!r} {row['style']!r}")
    if not row["id"].startswith(f"{prefix}-{row['lang']}-{row['style']}-"):
        wrong.append(f"id {row['id']!r}")
    if row["split"] != "heldout" + prefix[1:] or not str(row["question"]).strip():
        wrong.append(f"split {row['split']!r} or empty question")
    if (row["note"] is None) != (row["style"] == "oos"):
        wrong.append("exactly the out-of-scope questions have no note")
    elif row["note"] is not None and row["note"] not in documents:
        wrong.append(f"note {row['note']!r} is no corpus document")
    return wrong


@pytest.mark.parametrize("prefix", sorted(SETS))
def test_heldout_sets_are_well_formed_and_all_reported(prefix: str) -> None:
    rows = _rows(prefix)
    assert len({r["id"] for r in rows}) == len(rows), "ids must be unique"
    bad = {r["id"]: p for r in rows if (p := problems(r, prefix))}
    assert not bad, bad
    # the bench reports the file per language and style: every row is in exactly one of its groups
    # (held-out 4 as a held-out set; heldout_2 and heldout_3 as groups of development data since session 11)
    keys = [k for k in [*HELD_OUT, *GROUPS] if k.startswith(f"{prefix}-")]
    reported = [r["id"] for k in keys for r in load(k)]
    assert sorted(reported) == sorted(r["id"] for r in rows)


def test_heldout_4_has_the_asked_for_weights() -> None:
    counts = Counter((r["lang"], r["style"]) for r in _rows("h4"))
    assert sum(counts.values()) == 80
    assert counts[("zh", "lay")] >= 25 and counts[("en", "lay")] >= 20
    assert counts[("zh", "expert")] + counts[("en", "expert")] >= 15
    assert counts[("zh", "expert")] and counts[("en", "expert")]
    assert (
        counts[("zh", "oos")] + counts[("en", "oos")] >= 20
        and counts[("zh", "oos")]
        and counts[("en", "oos")]
    )


def test_a_malformed_row_is_caught() -> None:
    good = _rows("h4")[0]
    assert problems(good, "h4") == []
    broken = [
        {**good, "note": "99_missing.md"},
        {**good, "note": None},
        {**good, "style": "everyday"},
        {**good, "split": "heldout3"},
        {k: v for k, v in good.items() if k != "lang"},
    ]
    assert all(problems(row, "h4") for row in broken)
