"""A user's file → cited chunks: langchain-community loaders, langchain-text-splitters.

Each chunk knows where it came from: the page of a PDF, the heading of a Markdown/HTML/DOCX
section, the lines of a TXT or CSV file. A file that cannot be read (corrupt, encrypted, empty,
unsupported) raises `KbFileError` naming the file and what to do; nothing is returned half-read.
"""

from __future__ import annotations

import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

__all__ = ["SUPPORTED", "Chunk", "KbFileError", "load_chunks", "refuse_binary", "text_encoding"]

CHUNK_CHARS = 600
CHUNK_OVERLAP = 60
SUPPORTED = {
    ".pdf": "PDF",
    ".docx": "Word",
    ".html": "HTML",
    ".htm": "HTML",
    ".md": "Markdown",
    ".markdown": "Markdown",
    ".txt": "text",
    ".csv": "CSV",
}
_SEPARATORS = ["\n\n", "\n", "。", "！", "？", "；", ". ", "! ", "? ", "; ", "，", ", ", " ", ""]
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class KbFileError(ValueError):
    """A file that cannot be indexed; the message names it and says what to do."""

    def __init__(self, name: str, problem: str, fix: str) -> None:
        super().__init__(f"{name}：{problem}；{fix}")
        self.name, self.problem, self.fix = name, problem, fix


@dataclass(frozen=True)
class Chunk:
    """One piece of a file: its text and where it is (`page` 1-based for PDFs, `section` a heading)."""

    text: str
    page: int | None = None
    section: str = ""
    lines: str = ""

    @property
    def where(self) -> str:
        """How an answer cites the place: 第 3 页 / “并网流程”一节 / 第 12–20 行."""
        parts = []
        if self.page is not None:
            parts.append(f"第 {self.page} 页")
        if self.section:
            parts.append(f"“{self.section}”一节")
        if self.lines and not parts:
            parts.append(f"第 {self.lines} 行")
        return "，".join(parts)


def load_chunks(path: Path, name: str | None = None) -> tuple[list[Chunk], int]:
    """Chunks of the file at `path` and its page count (1 for files without pages)."""
    name = name or path.name
    kind = path.suffix.lower()
    if kind not in SUPPORTED:
        raise KbFileError(
            name,
            f"不支持的文件类型“{kind or '无扩展名'}”",
            f"请转换为以下格式之一再添加：{'、'.join(sorted(set(SUPPORTED)))}",
        )
    if not path.is_file():
        raise KbFileError(name, "文件不存在或不是普通文件", "请检查路径")
    if path.stat().st_size == 0:
        raise KbFileError(name, "文件是空的（0 字节）", "请确认文件已完整保存后再添加")
    loader = {".pdf": _pdf, ".docx": _docx, ".html": _html, ".htm": _html, ".csv": _csv}.get(kind, _text)
    chunks, pages = loader(path, name)
    chunks = [c for c in chunks if c.text.strip()]
    if not chunks:
        hint = "若是扫描件，请先做文字识别（OCR）再添加" if kind == ".pdf" else "请确认文件内容后再添加"
        raise KbFileError(name, "没有可提取的文字", hint)
    return chunks, pages


def _splitter() -> Any:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(
        chunk_size=CHUNK_CHARS, chunk_overlap=CHUNK_OVERLAP, separators=_SEPARATORS, keep_separator="end"
    )


def _split(text: str, **where: Any) -> list[Chunk]:
    return [Chunk(piece.strip(), **where) for piece in _splitter().split_text(text) if piece.strip()]


def _pdf(path: Path, name: str) -> tuple[list[Chunk], int]:
    from langchain_community.document_loaders import PyPDFLoader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its repair warnings: the KbFileError says it all
    try:
        pages = PyPDFLoader(str(path), mode="page").load()
    except FileNotDecryptedError:
        raise KbFileError(
            name, "PDF 已加密（需要密码）", "请先去掉密码（例如 qpdf --decrypt 输入.pdf 输出.pdf）再添加"
        ) from None
    except (PdfReadError, ValueError, OSError, KeyError) as error:
        raise _corrupt(name, "PDF", error) from None
    finally:
        quiet.setLevel(level)
    chunks = []
    for page in pages:
        number = int(page.metadata.get("page", 0)) + 1
        chunks.extend(_split(_unwrap(page.page_content), page=number))
    return chunks, len(pages)


_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")
_LINE_END = ("。", "！", "？", "；", "：", ".", "!", "?", ":", ";")


def _unwrap(text: str) -> str:
    """A PDF page's text with its layout line breaks joined (a space between Latin words, none in Chinese)."""
    lines = text.split("\n")
    out = lines[0] if lines else ""
    for line in lines[1:]:
        if not line.strip() or not out.strip() or out.rstrip().endswith(_LINE_END):
            out += "\n" + line
        elif _CJK.match(out[-1:]) and _CJK.match(line.lstrip()[:1]):
            out += line.lstrip()
        else:
            out += " " + line.lstrip()
    return out


def _docx(path: Path, name: str) -> tuple[list[Chunk], int]:
    from langchain_community.document_loaders import Docx2txtLoader

    if path.read_bytes()[:4] == b"\xd0\xcf\x11\xe0":  # an OLE container: encrypted .docx or old .doc
        raise KbFileError(
            name,
            "这是加密的 Word 文件或旧版 .doc 格式",
            "请在 Word 中去掉密码并另存为 .docx 后再添加",
        )
    try:
        text = "\n".join(d.page_content for d in Docx2txtLoader(str(path)).load())
        headings = _docx_headings(path)
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError, ValueError) as error:
        raise _corrupt(name, "Word（.docx）", error) from None
    # docx2txt keeps paragraphs as lines but drops styles: the heading lines come from the XML.
    chunks: list[Chunk] = []
    section, body = "", list[str]()
    for line in [*text.splitlines(), None]:
        if line is None or line.strip() in headings:
            chunks.extend(_split("\n".join(body), section=section))
            section, body = (line or "").strip(), [line or ""]
        else:
            body.append(line)
    return chunks, 1


def _docx_headings(path: Path) -> set[str]:
    """Texts of the paragraphs styled as headings (Heading 1…9, 标题 1…, Title)."""
    with zipfile.ZipFile(path) as archive:
        root = ElementTree.fromstring(archive.read("word/document.xml"))
    found = set()
    for para in root.iter(f"{_W}p"):
        style = para.find(f"{_W}pPr/{_W}pStyle")
        value = (style.get(f"{_W}val") or "") if style is not None else ""
        if value.lower().startswith(("heading", "title")) or value.startswith("标题"):
            text = "".join(t.text or "" for t in para.iter(f"{_W}t")).strip()
            if text:
                found.add(text)
    return found


def _html(path: Path, name: str) -> tuple[list[Chunk], int]:
    from langchain_text_splitters import HTMLHeaderTextSplitter

    raw = _decode(path, name)
    splitter = HTMLHeaderTextSplitter([("h1", "h1"), ("h2", "h2"), ("h3", "h3")])
    chunks = []
    for doc in splitter.split_text(raw):
        heads = [str(doc.metadata[h]) for h in ("h1", "h2", "h3") if doc.metadata.get(h)]
        chunks.extend(_split(doc.page_content, section=heads[-1] if heads else ""))
    return chunks, 1


def _text(path: Path, name: str) -> tuple[list[Chunk], int]:
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    raw = _decode(path, name)
    if path.suffix.lower() in (".md", ".markdown"):
        splitter = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2"), ("###", "h3")], strip_headers=False)
        chunks = []
        for doc in splitter.split_text(raw):
            heads = [str(doc.metadata[h]) for h in ("h1", "h2", "h3") if doc.metadata.get(h)]
            chunks.extend(_split(doc.page_content, section=heads[-1] if heads else ""))
        return chunks, 1
    chunks, line = [], 1
    for piece in _splitter().split_text(raw):
        start = raw.find(piece[:40])
        first = raw.count("\n", 0, start) + 1 if start >= 0 else line
        last = first + piece.count("\n")
        chunks.append(Chunk(piece.strip(), lines=f"{first}–{last}" if last > first else str(first)))
        line = last
    return chunks, 1


def _csv(path: Path, name: str) -> tuple[list[Chunk], int]:
    from langchain_community.document_loaders import CSVLoader

    encoding = _encoding(path, name)
    try:
        rows = CSVLoader(str(path), encoding=encoding).load()
    except (RuntimeError, UnicodeDecodeError) as error:  # CSVLoader wraps every read error in RuntimeError
        raise _corrupt(name, "CSV", error.__cause__ or error) from None
    chunks: list[Chunk] = []
    batch: list[str] = []
    first = 2  # line 1 is the header
    for row in rows:
        line = int(row.metadata.get("row", 0)) + 2
        if batch and sum(map(len, batch)) + len(row.page_content) > CHUNK_CHARS:
            chunks.append(
                Chunk("\n\n".join(batch), lines=f"{first}–{line - 1}" if line - 1 > first else str(first))
            )
            batch, first = [], line
        batch.append(row.page_content)
    if batch:
        last = first + len(batch) - 1
        chunks.append(Chunk("\n\n".join(batch), lines=f"{first}–{last}" if last > first else str(first)))
    return chunks, 1


def _encoding(path: Path, name: str) -> str:
    return text_encoding(path.read_bytes(), name)


def text_encoding(raw: bytes, name: str) -> str:
    """The encoding `raw` is written in (UTF-8 with or without BOM, UTF-16 with BOM, GB18030).

    Raises `KbFileError` naming `name` when it is none of these, or binary data (`refuse_binary`).
    """
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):  # Windows Notepad's "Unicode": UTF-16 with its byte-order mark
        encodings: tuple[str, ...] = ("utf-16",)
    elif b"\x00" in raw:  # no text in these encodings holds a NUL byte (git's test for binary files)
        raise _binary(name, raw.count(b"\x00"))
    else:
        encodings = ("utf-8-sig", "gb18030")
    for encoding in encodings:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        refuse_binary(text, name)
        return encoding
    raise KbFileError(name, "文字编码无法识别（既不是 UTF-8 也不是 GBK）", "请另存为 UTF-8 编码后再添加")


def _decode(path: Path, name: str) -> str:
    raw = path.read_bytes()
    return raw.decode(text_encoding(raw, name))


# control characters a text file does not hold (tab, line breaks, form feed and ESC of coloured logs are text)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")
MAX_CONTROL_SHARE = 0.01  # of a file's characters


def refuse_binary(text: str, name: str) -> None:
    """Raise `KbFileError` when decoded `text` is binary data, not writing (NUL or other control characters).

    A file of NUL bytes, or an executable or image renamed `.txt`, can decode as UTF-8 or GB18030
    and would otherwise be indexed as passages of garbage.
    """
    controls = len(_CONTROL.findall(text))
    if "\x00" in text or controls > MAX_CONTROL_SHARE * len(text):
        raise _binary(name, controls)


def _binary(name: str, controls: int) -> KbFileError:
    return KbFileError(
        name,
        f"这不是文字文件：其中有 {controls} 个控制字符（如 NUL 字节），像是二进制数据或损坏的文件",
        "请确认选对了文件；若是其他软件的文档，请先导出为 .txt、.md、.csv、.docx 或 .pdf 再添加",
    )


def _corrupt(name: str, kind: str, error: BaseException) -> KbFileError:
    return KbFileError(
        name,
        f"无法读取，文件可能已损坏或不是真正的 {kind} 文件（{type(error).__name__}）",
        "请用原软件重新导出或另存一份后再添加",
    )
