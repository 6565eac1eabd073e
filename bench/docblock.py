"""A bench's own section of a docs page, between its markers, rewritten in place."""

from __future__ import annotations

from pathlib import Path


def write_section(doc: Path, start: str, end: str, body: str) -> None:
    """Replace only the text between `start` and `end` in `doc` (appended when the markers are absent)."""
    block = f"{start}\n{body.strip()}\n{end}"
    doc.parent.mkdir(parents=True, exist_ok=True)
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + block + "\n"
    doc.write_text(text, encoding="utf-8")
