"""`plangraph kb add|list|remove|search`: a user's own documents in the knowledge base.

Documents added here are found by that user's knowledge agent (and, with `--shared`, by every
user's). Formats: PDF, DOCX, HTML, Markdown, TXT, CSV; a folder adds every such file in it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from plangraph.errors import UserFacingError

__all__ = ["configure_kb", "run_kb"]


def configure_kb(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph kb …`."""
    sub = parser.add_subparsers(dest="kb_command", required=True)
    add = sub.add_parser("add", help="add or update files (PDF, DOCX, HTML, Markdown, TXT, CSV) or folders")
    add.add_argument("paths", nargs="+", metavar="PATH")
    add.add_argument("--shared", action="store_true", help="for every user (a shared document)")
    listing = sub.add_parser("list", help="list your documents and the shared ones")
    remove = sub.add_parser("remove", help="remove a document by the id `kb list` shows")
    remove.add_argument("id")
    remove.add_argument("--shared", action="store_true", help="remove a shared document")
    search = sub.add_parser("search", help="search the knowledge base as your knowledge agent does")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=5, help="number of results")
    for sp in (add, listing, remove, search):
        sp.add_argument("--user", default=None, help="user id (default: PLANGRAPH_USER_ID or 'default')")
        sp.add_argument("--json", action="store_true", help="JSON instead of text")


def _files(paths: list[str]) -> list[Path]:
    from tools.kb.loaders import SUPPORTED

    found: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*")) if p.is_file() and p.suffix.lower() in SUPPORTED)
        else:
            found.append(path)
    return found


MAX_FILE_BYTES = 50_000_000  # as an upload over HTTP (PLANGRAPH_MAX_UPLOAD_BYTES' default)


def _check_file(path: Path) -> None:
    """KbFileError for what is not a regular file of a sensible size (read whole, /dev/zero never ends)."""
    from tools.kb.uploads import KbFileError

    if path.exists() and not path.is_file():
        raise KbFileError(path.name, "不是普通文件（设备、管道或套接字）", "请给出文件或文件夹")
    if path.is_file() and path.stat().st_size > MAX_FILE_BYTES:
        size = path.stat().st_size / 1e6
        raise KbFileError(
            path.name, f"文件有 {size:.0f} MB，超过 {MAX_FILE_BYTES // 1_000_000} MB", "请拆分后再添加"
        )


def run_kb(args: argparse.Namespace) -> int:
    """Run one `kb` subcommand; exit 1 when any file could not be added."""
    from graphs.context import Context
    from graphs.services import ServiceHub
    from tools.kb.uploads import SHARED, KbFileError

    context = Context()
    if args.user:
        context.user_id = args.user
    if getattr(args, "data_dir", None):
        context.data_dir = args.data_dir
    index = ServiceHub().knowledge(context)
    owner = SHARED if getattr(args, "shared", False) else context.user_id
    rows: list[dict[str, Any]] = []
    failed = 0
    if args.kb_command == "add":
        for path in _files(args.paths):
            try:
                _check_file(path)
                doc = index.uploads.add(path, owner)
                rows.append(doc.as_dict())
                pages = f"{doc.pages} 页，" if doc.kind == "PDF" else ""
                _say(args, f"{_STATUS[doc.status]} {doc.name}（{doc.id}，{pages}{doc.chunks} 段）")
            except KbFileError as error:
                failed += 1
                rows.append({"name": error.name, "error": error.problem, "fix": error.fix})
                _say(args, f"失败 {error}", error=True)
    elif args.kb_command == "list":
        rows = [d.as_dict() for d in index.uploads.documents(index.owners)]
        for row in rows:
            scope = "共享" if row["scope"] == "shared" else "个人"
            pages = f"{row['pages']} 页  " if row["kind"] == "PDF" else ""
            _say(
                args,
                f"{row['id']}  {scope}  {row['name']}  {row['kind']}  {pages}"
                f"{row['chunks']} 段  {row['added']}",
            )
        if not rows:
            _say(args, f"用户 {context.user_id} 还没有添加文档；用 plangraph kb add 文件 添加。")
    elif args.kb_command == "remove":
        removed = index.uploads.remove(args.id, [owner])
        if removed is None:
            where = "共享文档" if owner == SHARED else f"用户 {context.user_id} 的文档"
            raise UserFacingError(f"{where}中没有编号 {args.id}；用 plangraph kb list 查看编号。")
        rows = [removed.as_dict()]
        _say(args, f"已移除 {removed.name}（{removed.id}）")
    else:
        index.refresh()
        for hit in index.search(args.query, k=args.k):
            p = hit.passage
            row = {"name": p.title, "where": p.source, "score": round(hit.score, 4), "relevant": hit.relevant}
            rows.append({**row, "text": p.text})
            _say(
                args,
                f"{p.title} · {p.source} · 相关度 {hit.score:.3f}{'' if hit.relevant else '（弱）'}\n  "
                + p.text[:300].replace("\n", "\n  "),
            )
        if not rows:
            _say(args, f"知识库中没有与“{args.query}”相关的内容。")
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    return 1 if failed else 0


_STATUS = {"added": "已添加", "updated": "已更新", "unchanged": "未变化"}


def _say(args: argparse.Namespace, text: str, error: bool = False) -> None:
    if not args.json:
        import sys

        print(text, file=sys.stderr if error else sys.stdout)
