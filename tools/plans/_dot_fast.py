"""A small reader for the plain DOT that plans and templates are written in, so pydot is rarely loaded.

pydot builds its pyparsing grammar at import and streamlines it on the first parse: 0.3 s of CPU
before the first agent's internal plan is read, in every process. Plans, internal plans and
workflow templates use a plain subset: one `digraph` of node statements with `[key=value …]`
lists, `a -> b` edges, `key=value;` graph attributes and `graph/node/edge [...]` defaults, with
`//`, `#` and `/* */` comments. `read_plain_dot` reads exactly that subset and gives what pydot
would give for it (raw values, quotes kept; nodes and edges in pydot's order). Anything else —
ports, subgraphs, HTML labels, `+` concatenation, unusual spellings, any syntax error — returns
None, and the caller asks pydot, whose answer (or error message) is authoritative.
tests/unit/plans/test_dot_fast.py compares the two on the shipped files and on generated ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RawDot", "read_plain_dot"]

_SPACE = " \t\r\n"
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|[0-9.]+")
_AFTER_BARE = frozenset(_SPACE + ",;[]={}-/#")
_KEYWORDS = ("strict", "graph", "digraph", "subgraph", "node", "edge")


@dataclass
class RawDot:
    """One parsed graph as pydot reports it: raw IDs and values (quotes kept), nodes grouped by name."""

    graph_type: str
    has_subgraphs: bool
    attributes: dict[str, str | None] = field(default_factory=dict)
    nodes: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    edges: list[tuple[Any, Any]] = field(default_factory=list)  # pydot: a subgraph endpoint is not a str


class _Decline(Exception):
    """Not in the plain subset: let pydot read it."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        """Skip whitespace and comments (pyparsing's whitespace is exactly space, tab, CR, LF)."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in _SPACE:
                self.pos += 1
            elif ch == "#" or text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise _Decline
                self.pos = end + 2
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self, literal: str) -> bool:
        if self.peek() and self.text.startswith(literal, self.pos):
            self.pos += len(literal)
            return True
        return False

    def ident(self) -> str:
        """A quoted string (raw, quotes kept, line continuations removed) or a plain ASCII word."""
        ch = self.peek()
        if ch == '"':
            return self._quoted()
        match = _BARE.match(self.text, self.pos)
        if match is None:
            raise _Decline
        end = match.end()
        if end < len(self.text) and self.text[end] not in _AFTER_BARE:
            raise _Decline  # "12ab", "光伏", "a:b", "a+b": pydot's own rules decide
        word = match.group()
        if word.lower().startswith(_KEYWORDS):
            raise _Decline  # pyparsing matches keywords case-blind and without a word boundary
        self.pos = end
        return word

    def _quoted(self) -> str:
        text, i = self.text, self.pos + 1
        while i < len(text):
            ch = text[i]
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                raw = text[self.pos : i + 1]
                self.pos = i + 1
                if self.peek() == "+":
                    raise _Decline  # "a" + "b"
                if "\\" in raw:
                    raw = raw.replace("\\\r\n", "").replace("\\\n", "")
                return raw
            i += 1
        raise _Decline

    def attr_list(self) -> dict[str, str | None]:
        """One `[k=v, k=v …]` list (`,` or spaces between pairs; every key has a value)."""
        attrs: dict[str, str | None] = {}
        while not self.take("]"):
            key = self.ident()
            if key in attrs or not self.take("="):
                raise _Decline
            attrs[key] = self.ident()
            self.take(",")
        if self.peek() == "[":
            raise _Decline  # several lists on one statement
        return attrs


def read_plain_dot(text: str) -> RawDot | None:
    """`text` read as pydot would read it, or None when it is not plain DOT (then ask pydot)."""
    try:
        return _read(_Reader(text))
    except (_Decline, IndexError):
        return None


def _read(r: _Reader) -> RawDot:
    if not r.take("digraph"):
        raise _Decline
    if r.peek() != "{":
        r.ident()  # the graph's name is not used
    if not r.take("{"):
        raise _Decline
    raw = RawDot("digraph", False)
    nodes: dict[str, list[dict[str, str | None]]] = {}
    edges: dict[tuple[str, str], int] = {}
    while not r.take("}"):
        r.skip()
        if r.text.startswith(("graph", "node", "edge"), r.pos):
            kind = _default_kind(r)
            nodes.setdefault(kind, []).append(r.attr_list())
        else:
            first = r.ident()
            if r.take("="):
                if first in raw.attributes:
                    raise _Decline
                raw.attributes[first] = r.ident()
            elif r.take("->"):
                points = [first, r.ident()]
                while r.take("->"):
                    points.append(r.ident())
                if r.take("["):
                    r.attr_list()  # edge attributes are not read
                for pair in zip(points, points[1:], strict=False):
                    edges[pair] = edges.get(pair, 0) + 1
            else:
                if first in nodes:
                    raise _Decline  # declared twice: pydot's answer names it
                attrs = r.attr_list() if r.take("[") else {}
                nodes[first] = [attrs]
        if r.take(";") and r.peek() == ";":
            raise _Decline
    r.skip()
    if r.pos != len(r.text):
        raise _Decline
    raw.nodes = [(name, attrs) for name, group in nodes.items() for attrs in group]
    raw.edges = [pair for pair, count in edges.items() for _ in range(count)]
    return raw


def _default_kind(r: _Reader) -> str:
    """`graph [`, `node [` or `edge [` (lower case, then the list); anything else is not plain."""
    for kind in ("graph", "node", "edge"):
        if r.text.startswith(kind, r.pos):
            r.pos += len(kind)
            if r.take("["):
                return kind
    raise _Decline
