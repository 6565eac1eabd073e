"""The generated README block and S1 plan picture are what `make docs` would write now."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pytest

from plangraph import docs_gen
from plangraph.docs_gen import BLOCK_END, BLOCK_START, PLAN_DOT, PLAN_SVG, ROOT, StaleDocsError

README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def s1_dot(tmp_path_factory):
    return docs_gen.s1_plan_dot(tmp_path_factory.mktemp("docs"))


def test_readme_block_is_current():
    current = README[README.index(BLOCK_START) : README.index(BLOCK_END) + len(BLOCK_END)]
    assert current == docs_gen.readme_block(docs_gen.mermaid()), "README is stale: run make docs"
    assert "executor -.-> ask_user" in current and f"]({PLAN_SVG})" in current


def test_block_sits_under_how_it_works():
    heading = README.index("## How it works\n")
    assert heading < README.index(BLOCK_START) < README.index("\n## ", heading + 1)


def test_plan_dot_is_current_and_deterministic(s1_dot, tmp_path):
    assert (ROOT / PLAN_DOT).read_text(encoding="utf-8") == s1_dot, "docs/img is stale: run make docs"
    assert docs_gen.s1_plan_dot(tmp_path) == s1_dot  # a second run, another data dir: same text
    assert 'planId="plan_s1"' in s1_dot and 'status="待用户输入中"' in s1_dot
    assert "plan_s1:0" in s1_dot and "plan_" not in s1_dot.replace("plan_s1", "")


def test_committed_svg_draws_the_s1_plan():
    root = ET.fromstring((ROOT / PLAN_SVG).read_bytes())
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"0. pv_calc", "1. sensitivity", "2. report", "[待用户输入中]", "[待初始化]"} <= texts


def test_replace_block_keeps_the_rest_and_rejects_missing_markers():
    text = f"# t\n\nbefore\n{BLOCK_START}\nold\n{BLOCK_END}\nafter\n"
    assert docs_gen.replace_block(text, "NEW") == "# t\n\nbefore\nNEW\nafter\n"
    for broken in ("# t\n", f"{BLOCK_START}\n", f"{BLOCK_END}\n{BLOCK_START}\n", text + BLOCK_START):
        with pytest.raises(StaleDocsError, match="make docs"):
            docs_gen.replace_block(broken, "NEW")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_main_writes_a_checkout_and_check_reports_staleness(tmp_path, capsys):
    (tmp_path / "README.md").write_text(
        f"# x\n\n## How it works\n\n{BLOCK_START}\nstale\n{BLOCK_END}\n\n## Rest\nkept\n", encoding="utf-8"
    )
    assert docs_gen.main(["--root", str(tmp_path), "--check"]) == 1
    assert "stale: README.md" in capsys.readouterr().err
    assert docs_gen.main(["--root", str(tmp_path)]) == 0
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# x\n\n## How it works\n\n<!-- generated") and readme.endswith(
        "## Rest\nkept\n"
    )
    assert "```mermaid\n" in readme and "stale" not in readme
    assert (tmp_path / PLAN_SVG).read_bytes().lstrip().startswith(b"<?xml")
    assert docs_gen.main(["--root", str(tmp_path), "--check"]) == 0


def test_main_without_markers_says_how_to_fix(tmp_path, capsys):
    (tmp_path / "README.md").write_text("# x\n", encoding="utf-8")
    assert docs_gen.main(["--root", str(tmp_path)]) == 2
    assert "generated:graphs:start" in capsys.readouterr().err
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "# x\n"
