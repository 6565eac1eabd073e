"""The knowledge base over HTTP: a real server on a free port, per-user and admin-shared documents."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.http.http_support import KEY_ALICE, KEY_BOB, KEYS, Live, human, serve
from tests.integration.kb.kb_files import DOCX_FACT, PDF_FACT, make_all, make_bad

KEY_ADMIN = "key-admin-0123456789"


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[Live]:
    from plangraph.server import create_app

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLANGRAPH_EMBEDDINGS", "hash")
        for name in (
            "PLANGRAPH_MODEL",
            "PLANGRAPH_CHECKPOINT_URL",
            "PLANGRAPH_CHROMA_URL",
            "PLANGRAPH_KB_DIR",
        ):
            mp.delenv(name, raising=False)
        mp.setenv("PLANGRAPH_MAX_UPLOAD_BYTES", "200000")
        data = tmp_path_factory.mktemp("kbhttp")
        app = create_app(
            data_dir=data, checkpoint_url="", api_keys=KEYS, admin_keys=[KEY_ADMIN], rate_limit_per_minute=0
        )
        with serve(app) as url:
            yield Live(url, data)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kbfiles")
    return {**make_all(folder / "good"), **make_bad(folder / "bad")}


def put(client, path, shared: bool = False, name: str | None = None):
    return client.put(
        f"/kb/documents/{name or path.name}",
        content=path.read_bytes(),
        params={"shared": "true"} if shared else {},
    )


def names(client) -> set[str]:
    return {d["name"] for d in client.get("/kb/documents").json()["documents"]}


def found(client, query: str) -> list[tuple[str, str]]:
    results = client.get("/kb/search", params={"q": query}).json()["results"]
    return [(r["name"], r["where"]) for r in results if r["relevant"]]


def test_a_user_uploads_searches_and_removes_their_own_documents(live, files):
    with live.client(KEY_ALICE) as alice, live.client(KEY_BOB) as bob:
        first = put(alice, files["pdf"])
        assert first.status_code == 201, first.text
        doc = first.json()
        assert doc["name"] == "policy.pdf" and doc["pages"] == 3 and doc["scope"] == "user"
        assert str(live.data_dir) not in first.text
        assert put(alice, files["pdf"]).json()["status"] == "unchanged"
        assert "policy.pdf" in names(alice) and "policy.pdf" not in names(bob)
        assert ("policy.pdf", "第 2 页") in found(alice, PDF_FACT)
        assert all(name != "policy.pdf" for name, _ in found(bob, PDF_FACT))
        assert bob.delete(f"/kb/documents/{doc['id']}").status_code == 404  # not bob's
        assert alice.delete(f"/kb/documents/{doc['id']}").status_code == 200
        assert "policy.pdf" not in names(alice)


def test_bad_uploads_are_422_with_the_file_name_and_the_fix(live, files):
    with live.client(KEY_ALICE) as alice:
        locked = put(alice, files["locked"])
        assert locked.status_code == 422
        assert locked.json()["name"] == "locked.pdf" and "qpdf" in locked.json()["fix"]
        broken = put(alice, files["broken"])
        assert broken.status_code == 422 and "broken.pdf" in broken.json()["detail"]
        assert put(alice, files["empty"]).status_code == 422
        nul = put(alice, files["nul"])  # a .txt of NUL bytes was indexed as passages of NULs
        assert nul.status_code == 422 and "不是文字文件" in nul.json()["detail"] and nul.json()["fix"]
        odd = alice.put("/kb/documents/slides.pptx", content=b"x")
        assert odd.status_code == 422 and ".pdf" in odd.json()["detail"]
        big = alice.put("/kb/documents/huge.txt", content=b"a" * 300_000)
        assert big.status_code == 413 and "PLANGRAPH_MAX_UPLOAD_BYTES" in big.json()["detail"]
        assert not names(alice) & {"locked.pdf", "broken.pdf", "empty.txt", "nul.txt", "huge.txt"}


def test_shared_documents_need_the_admin_key_and_reach_every_user(live, files):
    with live.client(KEY_ALICE) as alice, live.client(KEY_BOB) as bob, live.client(KEY_ADMIN) as admin:
        assert put(alice, files["docx"], shared=True).status_code == 403
        shared = put(admin, files["docx"], shared=True)
        assert shared.status_code == 201 and shared.json()["scope"] == "shared"
        assert "manual.docx" in names(alice) and "manual.docx" in names(bob)
        assert ("manual.docx", "“并网验收”一节") in found(bob, DOCX_FACT)
        doc_id = shared.json()["id"]
        assert bob.delete(f"/kb/documents/{doc_id}", params={"shared": "true"}).status_code == 403
        # the knowledge agent of a turn over HTTP cites the shared document, by file name only
        reply = bob.post(
            "/plangraph/invoke",
            json={"input": human(f"并网验收要提交{DOCX_FACT}吗？")},
            headers={"X-Conversation-Id": "kb-1"},
        )
        assert reply.status_code == 200, reply.text
        assert "manual.docx" in reply.text and str(live.data_dir) not in reply.text
        assert admin.delete(f"/kb/documents/{doc_id}", params={"shared": "true"}).status_code == 200
        assert "manual.docx" not in names(bob)
