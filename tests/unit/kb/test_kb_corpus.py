"""The shipped corpus and the document format users write for PLANGRAPH_KB_DIR."""

from __future__ import annotations

import logging
import re

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from tools.kb.corpus import (
    MAX_PASSAGE_CHARS,
    SHIPPED_KB_DIR,
    KbConfigError,
    kb_dirs,
    read_document,
    scan_documents,
)
from tools.kb.index import KnowledgeIndex
from tools.kb.loaders import KbFileError, load_chunks


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


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("nul.txt", b"\x00" * 1000),  # the attack run's file: indexed as two passages of NULs before
        ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4),
        ("controls.csv", ("a,b\n" + "\x01\x02\x03\x04,\x05\x06\x07\x08\n" * 50).encode()),
    ],
)
def test_a_binary_file_is_refused_by_name_with_what_to_do(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(KbFileError, match=f"^{re.escape(name)}：这不是文字文件") as refused:
        load_chunks(path)
    assert "导出为 .txt" in refused.value.fix
    with pytest.raises(KbFileError, match="这不是文字文件"):
        read_document(path)  # a folder note (PLANGRAPH_KB_DIR) is checked the same way


def test_text_in_utf16_gbk_or_with_a_few_control_characters_is_still_read(tmp_path):
    utf16 = tmp_path / "notepad.txt"
    utf16.write_bytes("屋顶租金每年每平方米 5 元。\n".encode("utf-16"))  # Notepad's "Unicode" (BOM)
    gbk = tmp_path / "gbk.txt"
    gbk.write_bytes("组件清洗应在早晚进行。\n".encode("gb18030"))
    log = tmp_path / "log.txt"
    log.write_text(
        "\x1b[31m告警\x1b[0m 逆变器绝缘阻抗低，已断开直流侧开关并联系厂家。\f\n" * 3, encoding="utf-8"
    )
    assert "租金" in load_chunks(utf16)[0][0].text and "租金" in read_document(utf16)[0].text
    assert "早晚" in load_chunks(gbk)[0][0].text and "早晚" in read_document(gbk)[0].text
    assert "绝缘阻抗" in load_chunks(log)[0][0].text


def test_a_binary_file_in_a_knowledge_folder_is_skipped_and_named_once(tmp_path, caplog):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "园区须知.txt").write_text("屋顶租金每年每平方米 5 元。\n", encoding="utf-8")
    (folder / "dump.txt").write_bytes(b"\x00" * 1000)
    index = KnowledgeIndex(tmp_path / "data", [folder], DeterministicFakeEmbedding(size=16))
    with caplog.at_level(logging.WARNING, logger="plangraph.knowledge"):
        report = index.refresh()
        index.refresh()
    assert report.added == 1 and index.size == 1
    assert sum("dump.txt" in r.getMessage() for r in caplog.records) == 1  # not again on every refresh
    assert "dump.txt：这不是文字文件" in caplog.text
    assert all(h.passage.title == "园区须知" for h in index.search("屋顶租金", k=5))
