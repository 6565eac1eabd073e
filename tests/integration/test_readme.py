"""The README's embedding example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"


def _embedding_example(n: int = 0) -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Embedding it") :]
    section = section[: section.index("\n## ", 3)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) > n, f"README's 'Embedding it' section has no python block {n}"
    return blocks[n]


def test_embedding_example_runs_and_finishes_the_plan(data_dir, tmp_path, monkeypatch, capsys):
    code = _embedding_example()
    assert len(code.strip().splitlines()) <= 20
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the documented example itself
    assert "项目地点" in scope["question"]
    result = scope["result"]
    assert [s["status"] for s in result["plan"]["steps"]] == ["completed"] * 3
    assert result["summary"]
    assert (tmp_path / ".plangraph" / "artifacts").is_dir()
    out = capsys.readouterr().out
    assert "0 " in out and result["summary"] in out


def test_the_async_embedding_example_runs_on_async_sqlite(data_dir, tmp_path, monkeypatch, capsys):
    code = _embedding_example(1)
    assert "AsyncSqliteSaver" in code and len(code.strip().splitlines()) <= 25
    monkeypatch.chdir(tmp_path)
    scope: dict = {"__name__": "readme_async"}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the documented example itself
    result = scope["result"]
    assert [s["status"] for s in result["plan"]["steps"]] == ["completed"] * 3
    assert (tmp_path / "app-async.sqlite").is_file()
    out = capsys.readouterr().out
    assert "项目地点" in out and result["summary"] in out


def test_the_configuration_table_names_every_setting_the_code_reads():
    from dataclasses import fields

    from graphs.context import Context

    root = README.parent
    code = "\n".join(
        path.read_text(encoding="utf-8")
        for package in ("graphs", "nodes", "tools", "memory", "plangraph")
        for path in (root / package).rglob("*.py")
    )
    table = README.read_text(encoding="utf-8").split("## Configuration", 1)[1]
    missing = sorted({v for v in re.findall(r"PLANGRAPH_[A-Z_]+", code) if f"`{v}`" not in table})
    assert not missing, f"add these to README's configuration table: {missing}"
    assert not [f.name for f in fields(Context) if f"`{f.name}`" not in table]
