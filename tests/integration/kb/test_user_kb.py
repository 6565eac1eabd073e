"""Users' own documents: `plangraph kb …` on real files of every kind, atomic adds, per-user answers."""

from __future__ import annotations

import json

import pytest

from graphs.context import Context
from graphs.services import ServiceHub
from plangraph.cli import main
from tests.integration.kb.kb_files import (
    CSV_FACT,
    DOCX_FACT,
    HTML_FACT,
    MD_FACT,
    PDF_FACT,
    TXT_FACT,
    make_all,
    make_bad,
)
from tools.kb.uploads import UploadStore


def kb(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["kb", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def kb_json(capsys, *args: str):
    code, out, err = kb(capsys, *args, "--json")
    return code, json.loads(out), err


def top(capsys, query: str, user: str = "default") -> dict:
    _, hits, _ = kb_json(capsys, "search", query, "--user", user)
    return hits[0] if hits and hits[0]["relevant"] else {}


def test_every_format_is_added_listed_and_found_with_its_page_or_section(data_dir, tmp_path, capsys):
    files = make_all(tmp_path / "docs")
    code, rows, _ = kb_json(capsys, "add", *map(str, files.values()))
    assert code == 0
    assert {r["name"]: r["status"] for r in rows} == {p.name: "added" for p in files.values()}
    _, listed, _ = kb_json(capsys, "list")
    by_name = {r["name"]: r for r in listed}
    assert by_name["policy.pdf"]["pages"] == 3 and by_name["policy.pdf"]["kind"] == "PDF"
    assert by_name["manual.docx"]["kind"] == "Word" and all(r["scope"] == "user" for r in listed)

    expected = {
        PDF_FACT: ("policy.pdf", "第 2 页"),
        DOCX_FACT: ("manual.docx", "“并网验收”一节"),
        HTML_FACT: ("notice.html", "“计量装置”一节"),
        MD_FACT: ("faq.md", "“巡检制度”一节"),
        CSV_FACT: ("tariffs.csv", "第 2–3 行"),
    }
    for fact, (name, where) in expected.items():
        hit = top(capsys, fact)
        assert (hit.get("name"), hit.get("where")) == (name, where), fact
        assert fact.split()[0] in hit["text"]
    assert "rooftop SunVault storage" in top(capsys, PDF_FACT)["text"]  # PDF layout line breaks joined
    first, last = map(int, top(capsys, TXT_FACT)["where"].strip("第 行").split("–"))
    assert 1 < first <= 41 == last  # the lines of log.txt that chunk holds

    # Adding the same files again changes nothing; the text output names each file.
    code, out, _ = kb(capsys, "add", str(files["pdf"]))
    assert code == 0 and "未变化 policy.pdf" in out


def test_bad_files_are_reported_by_name_and_nothing_of_them_is_indexed(data_dir, tmp_path, capsys):
    good = make_all(tmp_path / "docs")["md"]
    bad = make_bad(tmp_path / "bad")
    code, out, err = kb(capsys, "add", str(good), *map(str, bad.values()))
    assert code == 1
    assert "已添加 faq.md" in out
    lines = {
        line.split("：")[0].removeprefix("失败 "): line
        for line in err.splitlines()
        if line.startswith("失败")
    }
    assert set(lines) == {p.name for p in bad.values()}
    assert "加密" in lines["locked.pdf"] and "qpdf --decrypt" in lines["locked.pdf"]
    assert "损坏" in lines["broken.pdf"] and "重新导出" in lines["broken.pdf"]
    assert "损坏" in lines["damaged.docx"]
    assert "空的" in lines["empty.txt"]
    assert "OCR" in lines["scanned.pdf"]
    assert "不是文字文件" in lines["nul.txt"] and "导出为" in lines["nul.txt"]  # indexed as NULs before
    _, listed, _ = kb_json(capsys, "list")
    assert [r["name"] for r in listed] == ["faq.md"]
    index = ServiceHub().knowledge(Context())
    stored = index.uploads._collection.get(include=["metadatas"])
    assert {m["doc_id"] for m in stored["metadatas"]} == {listed[0]["id"]}
    assert len(stored["ids"]) == listed[0]["chunks"]


def test_re_adding_a_changed_file_replaces_its_chunks(data_dir, tmp_path, capsys):
    doc = tmp_path / "rules.md"
    doc.write_text("# 规则\n\n## 旧条款\n\n电站执行玄鸟旧规。\n", encoding="utf-8")
    assert kb(capsys, "add", str(doc))[0] == 0
    assert top(capsys, "玄鸟旧规").get("name") == "rules.md"
    doc.write_text("# 规则\n\n## 新条款\n\n电站改为执行朱雀新规。\n", encoding="utf-8")
    code, rows, _ = kb_json(capsys, "add", str(doc))
    assert code == 0 and rows[0]["status"] == "updated"
    assert top(capsys, "朱雀新规").get("where") == "“新条款”一节"
    _, hits, _ = kb_json(capsys, "search", "玄鸟旧规")
    assert not any("玄鸟" in h["text"] for h in hits)  # the old version's chunks are gone
    _, listed, _ = kb_json(capsys, "list")
    assert len(listed) == 1
    index = ServiceHub().knowledge(Context())
    assert len(index.uploads._collection.get()["ids"]) == listed[0]["chunks"]
    # remove by id: gone from list, search and vectors
    code, out, _ = kb(capsys, "remove", listed[0]["id"])
    assert code == 0 and "已移除 rules.md" in out
    assert kb_json(capsys, "list")[1] == []
    assert not any("朱雀" in h["text"] for h in kb_json(capsys, "search", "朱雀新规")[1])
    assert index.uploads._collection.count() == 0
    code, _, err = kb(capsys, "remove", listed[0]["id"])
    assert code != 0 and "kb list" in err


class _FailingCollection:
    """A real Chroma collection whose second upsert fails (a crash half-way through a big file)."""

    def __init__(self, inner):
        self.inner, self.upserts = inner, 0

    def upsert(self, **kwargs):
        self.upserts += 1
        if self.upserts == 2:
            raise OSError("disk full")
        return self.inner.upsert(**kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_failure_half_way_through_a_file_leaves_the_previous_version_whole(data_dir, tmp_path, capsys):
    big = tmp_path / "big.txt"
    big.write_text("\n\n".join(f"第 {i} 条：旧版青龙条款内容。" * 20 for i in range(400)), encoding="utf-8")
    assert kb(capsys, "add", str(big))[0] == 0
    index = ServiceHub().knowledge(Context())
    before = index.uploads.documents(index.owners)[0]
    assert before.chunks > 256  # more than one upsert batch
    big.write_text("\n\n".join(f"第 {i} 条：新版白虎条款内容。" * 20 for i in range(400)), encoding="utf-8")
    store = index.uploads
    failing = _FailingCollection(store._collection)
    store._collection = failing
    try:
        with pytest.raises(OSError, match="disk full"):
            store.add(big, "default")
    finally:
        store._collection = failing.inner
    after = store.documents(index.owners)[0]
    assert (after.chunks, after.added) == (before.chunks, before.added)
    ids = set(store._collection.get()["ids"])
    assert ids == {p.passage_id for p in store.passages(["default"])}  # no new-version vectors left
    # and a fresh store (another process) sees the same, whole old version
    reopened = UploadStore(data_dir / "kb", store._collection, index.embeddings)
    assert [d.chunks for d in reopened.documents(["default"])] == [before.chunks]


def ask(runner, question: str) -> str:
    """The knowledge step's full answer as streamed (the plan and summary keep only its head)."""
    chunks: list[dict] = []
    runner.run(question, on_chunk=chunks.append)
    return "\n".join(c["agentChatResponse"]["content"] for c in chunks if "agentChatResponse" in c)


def test_the_knowledge_agent_cites_a_users_document_and_never_shows_it_to_another(data_dir, tmp_path, capsys):
    from plangraph.runner import PlanRunner

    files = make_all(tmp_path / "docs")
    assert kb(capsys, "add", str(files["pdf"]), "--user", "alice")[0] == 0
    assert kb(capsys, "add", str(files["docx"]), "--shared")[0] == 0
    question = "SunVault storage bonus 储能补贴政策是多少？"
    with PlanRunner.open(user_id="alice", conversation_id="a1") as runner:
        answer = ask(runner, question)
    assert "policy.pdf" in answer and "第 2 页" in answer and "0.25" in answer
    with PlanRunner.open(user_id="bob", conversation_id="b1") as runner:
        answer = ask(runner, question)
    assert "policy.pdf" not in answer and "0.25 yuan" not in answer
    with PlanRunner.open(user_id="bob", conversation_id="b2") as runner:
        answer = ask(runner, f"并网验收要提交{DOCX_FACT}吗？")
    assert "manual.docx" in answer and "并网验收" in answer
    # bob cannot list or remove alice's document
    _, listed, _ = kb_json(capsys, "list", "--user", "bob")
    assert [r["name"] for r in listed] == ["manual.docx"]
    alice_doc = next(r for r in kb_json(capsys, "list", "--user", "alice")[1] if r["name"] == "policy.pdf")
    assert kb(capsys, "remove", alice_doc["id"], "--user", "bob")[0] != 0
