"""The shipped corpus and the document format users write for PLANGRAPH_KB_DIR."""

from __future__ import annotations

import pytest

from tools.kb.corpus import (
    MAX_PASSAGE_CHARS,
    SHIPPED_KB_DIR,
    KbConfigError,
    kb_dirs,
    read_document,
    scan_documents,
)


def test_shipped_corpus_has_20_to_40_documents_each_citing_a_named_source():
    files = scan_documents([SHIPPED_KB_DIR])
    assert 20 <= len(files) <= 40
    for path in files.values():
        passages = read_document(path)
        assert passages, path
        head = passages[0]
        assert head.title and head.title != path.stem, f"{path.name}: first line must be '# 标题'"
        assert not head.source.startswith("本地文档"), f"{path.name}: needs a '来源：' line"
        assert any(ch.isdigit() for ch in head.source), f"{path.name}: source should carry a number or year"
        assert all(p.text.strip() for p in passages)


def test_document_without_source_line_is_cited_by_its_file_name(tmp_path):
    doc = tmp_path / "园区须知.txt"
    doc.write_text("屋顶租金每年每平方米 5 元。\n", encoding="utf-8")
    (passage,) = read_document(doc)
    assert passage.title == "园区须知"
    assert passage.source == "本地文档《园区须知.txt》"
    assert "租金" in passage.text


def test_long_document_is_split_into_passages_without_cutting_sentences(tmp_path):
    sentence = "组件清洗应在早晚进行，避免正午用冷水冲洗。"
    doc = tmp_path / "long.md"
    doc.write_text("# 运维手册\n来源：某电站运维规程 2024\n\n" + sentence * 80, encoding="utf-8")
    passages = read_document(doc)
    assert len(passages) > 1
    assert all(len(p.text) <= MAX_PASSAGE_CHARS for p in passages)
    assert all(p.text.replace("\n", "").endswith("。") for p in passages)
    assert {p.source for p in passages} == {"某电站运维规程 2024"}
    assert len({p.passage_id for p in passages}) == len(passages)


def test_kb_dir_setting_adds_user_folders_and_rejects_a_missing_one(tmp_path):
    assert kb_dirs("") == [SHIPPED_KB_DIR]
    assert kb_dirs(str(tmp_path)) == [SHIPPED_KB_DIR, tmp_path.resolve()]
    with pytest.raises(KbConfigError, match="PLANGRAPH_KB_DIR=.*is not a folder"):
        kb_dirs(str(tmp_path / "nope"))
