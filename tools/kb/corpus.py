"""Knowledge-base documents: where they live, how a file becomes cited passages.

A document is a `.md` or `.txt` file. Its first `# ` line is the title (else the file name), a
line starting with `来源：` (or `Source:`) names the source that answers cite, and an optional
`标签：` line adds search keywords, an optional `English:` line ("English title | summary")
lets a Chinese document answer English questions offline (it is searched too), and an optional
`问法：` line lists questions the document answers in everyday words ("太阳能板用久了功率下降多少算正常；…",
separated by "；"), so a question put in words the document does not use still finds it (doc2query
written by the document's author; `tools.kb.search`). Long bodies are cut into passages of about
`MAX_PASSAGE_CHARS`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from tools.kb.loaders import text_encoding

__all__ = [
    "KB_DIR_ENV",
    "MAX_PASSAGE_CHARS",
    "SHIPPED_KB_DIR",
    "KbConfigError",
    "KbPassage",
    "file_sha",
    "kb_dirs",
    "read_document",
    "scan_documents",
]

KB_DIR_ENV = "PLANGRAPH_KB_DIR"
SHIPPED_KB_DIR = Path(str(files("tools.kb") / "docs"))
MAX_PASSAGE_CHARS = 600
_SUFFIXES = (".md", ".txt")
_SOURCE = re.compile(r"^\s*(?:来源|出处|source)\s*[:：]\s*(.+)$", re.IGNORECASE)
_TAGS = re.compile(r"^\s*(?:标签|关键词|tags)\s*[:：]\s*(.+)$", re.IGNORECASE)
_ENGLISH = re.compile(r"^\s*(?:english|英文摘要)\s*[:：]\s*(.+)$", re.IGNORECASE)
_QUESTIONS = re.compile(r"^\s*(?:问法|常见问题|questions)\s*[:：]\s*(.+)$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])")


class KbConfigError(ValueError):
    """The knowledge-base folder setting points at something unusable."""


@dataclass(frozen=True)
class KbPassage:
    """One searchable piece of a document; `source` is what an answer cites."""

    passage_id: str
    doc_key: str
    title: str
    source: str
    tags: str
    text: str
    sha: str
    english: str = ""  # "English title | summary" of a Chinese document, for English answers offline
    questions: str = ""  # questions the document answers in everyday words ("…；…"), searched, never quoted


def kb_dirs(extra: str = "") -> list[Path]:
    """The shipped corpus plus the folders in `extra` (os.pathsep-separated; Context.kb_dirs)."""
    dirs = [SHIPPED_KB_DIR]
    for raw in extra.split(os.pathsep):
        if not raw.strip():
            continue
        path = Path(raw.strip()).expanduser().resolve()
        if not path.is_dir():
            raise KbConfigError(
                f"{KB_DIR_ENV}={raw!r} is not a folder; point it at a folder of .md/.txt documents "
                f"(several folders separated by {os.pathsep!r}) or unset it."
            )
        if path not in dirs:
            dirs.append(path)
    return dirs


def scan_documents(dirs: Iterable[Path]) -> dict[str, Path]:
    """Every `.md`/`.txt` file under `dirs` (recursively), keyed by its resolved path."""
    found: dict[str, Path] = {}
    for folder in dirs:
        for path in sorted(folder.rglob("*")):
            if path.suffix.lower() in _SUFFIXES and path.is_file() and not path.name.startswith("."):
                found[str(path.resolve())] = path
    return found


def file_sha(path: Path) -> str:
    """Content hash of a file (what incremental re-indexing compares)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_document(path: Path, doc_key: str | None = None) -> list[KbPassage]:
    """Parse one document into passages carrying its title, source and tags.

    Raises `KbFileError` (naming the file and what to do) for binary data or an unknown encoding.
    """
    raw = path.read_bytes()
    sha = hashlib.sha256(raw).hexdigest()
    key = doc_key or str(path.resolve())
    title, source, tags, english, questions, body = "", "", "", "", "", []
    for line in raw.decode(text_encoding(raw, path.name)).splitlines():
        stripped = line.strip()
        if not title and stripped.startswith("# "):
            title = stripped[2:].strip()
        elif not source and (m := _SOURCE.match(stripped)):
            source = m.group(1).strip()
        elif not tags and (m := _TAGS.match(stripped)):
            tags = m.group(1).strip()
        elif not english and (m := _ENGLISH.match(stripped)):
            english = m.group(1).strip()
        elif not questions and (m := _QUESTIONS.match(stripped)):
            questions = m.group(1).strip()
        else:
            body.append(line)
    title = title or path.stem
    source = source or f"本地文档《{path.name}》"
    prefix = hashlib.sha256(key.encode()).hexdigest()[:12]
    return [
        KbPassage(f"{prefix}:{sha[:12]}:{i}", key, title, source, tags, text, sha, english, questions)
        for i, text in enumerate(_passages("\n".join(body)) or [title])
    ]


def _passages(body: str) -> list[str]:
    """Paragraphs packed into passages of at most MAX_PASSAGE_CHARS (sentences never cut)."""
    pieces: list[str] = []
    for para in re.split(r"\n\s*\n", body):
        para = para.strip()
        if len(para) <= MAX_PASSAGE_CHARS:
            pieces.append(para)
        else:
            pieces.extend(s for s in _SENTENCE_END.split(para) if s.strip())
    passages: list[str] = []
    for piece in filter(None, pieces):
        if passages and len(passages[-1]) + len(piece) + 1 <= MAX_PASSAGE_CHARS:
            passages[-1] = f"{passages[-1]}\n{piece}"
        else:
            passages.append(piece)
    return passages
