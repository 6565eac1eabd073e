"""Render a DOT plan (agent-level or internal) to SVG or PNG with the Graphviz `dot` binary.

`styled_dot` turns a plan's DOT into a readable picture: each node shows who runs it, what it does
and its status, filled with one colour per status; the plan's JSON attributes are left out.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from typing import Literal

from tools.plans.dot import parse_dot_graph, quote
from tools.plans.status import StatusLabel

__all__ = ["STATUS_COLORS", "GraphvizMissingError", "RenderError", "render", "styled_dot"]

Format = Literal["svg", "png"]

STATUS_COLORS: dict[StatusLabel, str] = {
    "待初始化": "#f3f4f6",  # grey: not ready yet
    "待运行": "#dbeafe",  # blue: ready
    "运行中": "#fef08a",  # yellow: running
    "待用户输入中": "#fed7aa",  # orange: waiting for the user
    "完成": "#bbf7d0",  # green: done
    "失败": "#fecaca",  # red: failed
}
# Families tried in order (fontconfig/pango and browsers both read the list); CJK fonts first.
FONTS = "Noto Sans CJK SC,WenQuanYi Micro Hei,PingFang SC,Microsoft YaHei,sans-serif"
WRAP = 18  # characters per caption line (CJK characters are about two Latin ones wide)
MAX_LABEL = 240  # characters of a step's text shown in its box
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
INSTALL_HINT = "install Graphviz: apt-get install graphviz (Debian/Ubuntu) or brew install graphviz"


class GraphvizMissingError(RuntimeError):
    """The Graphviz `dot` program is not installed (or not on PATH)."""


class RenderError(RuntimeError):
    """Graphviz could not render the plan; the message carries its error output."""


def _caption(node_id: str, attrs: dict[str, str]) -> str:
    who = f"{node_id}. {attrs['agentName']}" if attrs.get("agentName") else attrs.get("toolCode", "")
    status = attrs.get("status") or "待初始化"
    # Graphviz stops a string at NUL (a syntax error) and a picture needs no more than a few lines
    label = _CONTROL.sub("", attrs.get("label", node_id))
    label = label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"
    text = textwrap.wrap(label, width=WRAP) or [""]
    return "\n".join(part for part in (who, *text, f"[{status}]") if part)


def styled_dot(dot_text: str) -> str:
    """The plan's DOT restyled for people: captions, status colours, CJK-capable fonts, left to right.

    Raises PlanFormatError (from `tools.plans.dot`) when the text is not a plan digraph.
    """
    graph = parse_dot_graph(dot_text)
    font = quote(FONTS)
    lines = [
        "digraph G {",
        "  rankdir=LR;",
        *(f"  {kind} [fontname={font}];" for kind in ("graph", "node", "edge")),
    ]
    for node_id, attrs in graph.nodes.items():
        shape = attrs.get("shape") or "box"
        color = STATUS_COLORS.get(attrs.get("status") or "待初始化", "#ffffff")  # type: ignore[call-overload]
        style = "filled,rounded" if shape in ("box", "record") else "filled"
        # record shapes would read | { } in a caption as field separators: draw them as boxes
        shape = "box" if shape == "record" else shape
        caption = quote(_caption(node_id, attrs))
        lines.append(
            f"  {quote(node_id)} [label={caption} shape={quote(shape)} style={quote(style)} fillcolor={quote(color)}];"
        )
    lines += [f"  {quote(a)} -> {quote(b)};" for a, b in graph.edges]
    return "\n".join([*lines, "}"]) + "\n"


def render(dot_text: str, fmt: Format = "svg", timeout: float = 30.0) -> bytes:
    """The plan drawn as `fmt` ("svg" or "png") by Graphviz `dot`, within `timeout` seconds."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"unsupported format {fmt!r}; use 'svg' or 'png'")
    source = styled_dot(dot_text).encode("utf-8")  # bad DOT is reported before looking for Graphviz
    binary = shutil.which("dot")
    if binary is None:
        raise GraphvizMissingError(f"Graphviz `dot` was not found on PATH; {INSTALL_HINT}")
    try:
        done = subprocess.run(
            [binary, f"-T{fmt}"], input=source, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise RenderError(
            f"Graphviz took longer than {timeout:g} s; simplify the plan or raise the timeout"
        ) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise RenderError(f"Graphviz failed (exit {done.returncode}): {message}")
    return done.stdout
