"""The plain-DOT reader gives exactly what pydot gives, or declines and leaves the text to pydot."""

from __future__ import annotations

import random
from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.plans.test_plan_dot import SEED_EP, pv_plan
from tools.plans._dot_fast import RawDot, read_plain_dot
from tools.plans.dot import PlanFormatError, _pydot_read, parse_dot_graph, plan_to_dot

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted(
    [
        *Path(str(files("nodes.agents") / "plans")).glob("*.dot"),
        *Path(str(files("tools.plans") / "templates")).glob("*.dot"),
        ROOT / "docs" / "img" / "plan-s1.dot",
    ]
)
TRICKY = 'a "quoted" \\ back\\slash\nnew line\r\n光伏 {json: [1, 2]} -> ; // not a comment # nor this'


def _pydot(text: str) -> RawDot | None:
    try:
        return _pydot_read(text)
    except PlanFormatError:
        return None


def _same(text: str) -> None:
    """The fast reader declines, or agrees with pydot (which then must have parsed the text)."""
    fast = read_plain_dot(text)
    if fast is not None:
        assert fast == _pydot(text), text


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_dot_file_is_read_without_pydot_and_as_pydot_reads_it(path):
    text = path.read_text(encoding="utf-8")
    fast = read_plain_dot(text)
    assert fast is not None, f"{path.name} should be plain DOT"
    assert fast == _pydot(text)


def test_written_plans_are_plain_and_read_as_pydot_reads_them():
    plan = pv_plan()
    plan["userQuery"] = TRICKY
    plan["steps"][0]["requirement"] = TRICKY
    plan["steps"][0]["result"]["output"] = TRICKY
    plan["context"] = {"note": TRICKY}
    for text in (plan_to_dot(plan), SEED_EP):
        fast = read_plain_dot(text)
        assert fast is not None
        assert fast == _pydot(text)
    ep = parse_dot_graph(SEED_EP)
    assert ep.nodes["4"]["component"] == "xx" and ("3", "4") in ep.edges


@pytest.mark.parametrize(
    "text",
    [
        "digraph G { a:p -> b; a; b; }",  # ports
        "digraph G { subgraph s { a; } }",  # subgraphs
        "digraph G { a -> {b c}; a; b; c; }",
        "digraph G { a [label=<b>x</b>]; }",  # HTML label
        'digraph G { a [label="x" + "y"]; }',  # concatenation
        "strict digraph G { a; }",
        "graph G { a -- b; a; b; }",
        "DIGRAPH G { a; }",
        "digraph G { a; a; }",  # declared twice: pydot's reading names it
        "digraph G { a [x=1][y=2]; }",
        "digraph G { 光伏 [label=x]; }",  # bare non-ASCII id: pydot's rules
        "digraph G { a [seqNo=12ab]; }",
        "digraph G { a [flag]; }",
        "digraph G { a;; ; }",
        "digraph G { a; } digraph H { b; }",
        'digraph G { a [label="unterminated]; }',
        "digraph G { /* open comment a; }",
    ],
)
def test_anything_but_plain_dot_is_left_to_pydot(text):
    assert read_plain_dot(text) is None
    _same(text)


def test_parse_errors_are_still_pydots_with_line_and_column():
    with pytest.raises(PlanFormatError, match=r"line 1, column \d+: invalid DOT"):
        parse_dot_graph('digraph G { a [label="x" }')
    with pytest.raises(PlanFormatError, match="declared twice"):
        parse_dot_graph("digraph G { a; a; }")


def test_edges_come_grouped_by_pair_in_pydots_order():
    text = "digraph G { a; b; c; a -> b; b -> c; a -> b -> c [color=red]; }"
    fast = read_plain_dot(text)
    assert fast is not None and fast == _pydot(text)
    assert fast.edges == [("a", "b"), ("a", "b"), ("b", "c"), ("b", "c")]


_PIECES = list('"\\;,[]{}=-><:/#*+ \n\t\r') + [
    "->",
    "--",
    "//",
    "/*",
    "*/",
    "graph",
    "node",
    "a",
    "7",
    "光",
    "\u3000",
]


def test_mutated_plans_are_read_as_pydot_reads_them_or_declined():
    """Each mutation inserts, deletes or replaces a DOT-significant piece somewhere in a real plan."""
    rng = random.Random(11)
    bases = [p.read_text(encoding="utf-8") for p in SHIPPED] + [plan_to_dot(pv_plan()), SEED_EP]
    accepted = 0
    for _ in range(400):
        text = rng.choice(bases)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text) + 1)
            piece = rng.choice(_PIECES)
            kind = rng.random()
            if kind < 0.4:
                text = text[:at] + piece + text[at:]
            elif kind < 0.7:
                text = text[:at] + text[at + rng.randint(1, 3) :]
            else:
                text = text[:at] + piece + text[at + len(piece) :]
        _same(text)
        accepted += read_plain_dot(text) is not None
    assert accepted > 40  # the comparison saw many accepted texts, not only declines


_ID = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
    st.from_regex(r"[0-9]{1,3}", fullmatch=True),
    st.text(max_size=12).map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(_ID, min_size=1, max_size=5),
    attrs=st.lists(st.tuples(_ID, _ID), max_size=4),
    graph_attrs=st.lists(st.tuples(_ID, _ID), max_size=3),
    edges=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=5),
    sep=st.sampled_from([" ", ", ", ",", "\n  "]),
)
def test_generated_plain_graphs_are_read_as_pydot_reads_them(names, attrs, graph_attrs, edges, sep):
    body = [f"{k}={v};" for k, v in graph_attrs]
    listed = sep.join(f"{k}={v}" for k, v in attrs)
    body += [f"{n} [{listed}];" for n in names]
    body += [f"{names[a % len(names)]} -> {names[b % len(names)]};" for a, b in edges]
    _same("digraph G {\n  " + "\n  ".join(body) + "\n}")
