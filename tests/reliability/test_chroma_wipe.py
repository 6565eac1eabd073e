"""`<data>/memory/chroma` deleted under a running process: recovered in that process.

Before: chromadb kept the deleted database open, every later PV turn of the server answered 500
("attempt to write a readonly database"), the answered plan was stored as failed and the answer
could not be given again.
"""

from __future__ import annotations

import shutil

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from tests.integration.http.http_support import KEY_ALICE, KEYS, serve
from tests.reliability.races import ANSWERS, S1
from tests.reliability.storage import FACT, filled_memory


@pytest.fixture
def hash_embeddings(monkeypatch):
    monkeypatch.setenv("PLANGRAPH_EMBEDDINGS", "hash")
    for name in ("PLANGRAPH_MODEL", "PLANGRAPH_CHECKPOINT_URL", "PLANGRAPH_CHROMA_URL"):
        monkeypatch.delenv(name, raising=False)


def test_block_memory_reopens_a_deleted_chroma_directory_and_resends_its_vectors(tmp_path, hash_embeddings):
    memory, ns, _ = filled_memory(tmp_path / "mem")
    before = memory.search(ns, FACT)[0].metadata["cosine"]
    shutil.rmtree(tmp_path / "mem" / "chroma")
    memory.add_messages(ns, [HumanMessage("换成上海再算一次"), AIMessage("好的，地点改为上海")])
    memory.flush(ns)
    hits = memory.search(ns, FACT)
    assert hits and FACT in hits[0].text
    assert before != 0 and hits[0].metadata["cosine"] == pytest.approx(before)  # old vectors re-sent
    assert (tmp_path / "mem" / "chroma" / "chroma.sqlite3").exists()
    assert any("上海" in h.text for h in memory.search(ns, "上海"))  # new ones stored too
    memory.close()


def test_running_server_survives_a_deleted_chroma_directory(tmp_path, hash_embeddings):
    from plangraph.server import create_app

    data = tmp_path / "data"
    app = create_app(data_dir=data, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0)
    with serve(app) as url, httpx.Client(base_url=url, headers={"X-API-Key": KEY_ALICE}, timeout=300) as http:

        def turn(conversation: str, payload: dict) -> dict:
            body = {"input": payload, "config": {"configurable": {"thread_id": conversation}}}
            response = http.post("/plangraph/invoke", json=body)
            assert response.status_code == 200, response.text
            return response.json()["output"]

        # a whole conversation first: Chroma is opened when the first vector is stored, not before
        turn("w0", {"messages": [{"role": "user", "content": S1}]})
        turn("w0", {"resume": ANSWERS[800]})
        assert "__interrupt__" in turn("w1", {"messages": [{"role": "user", "content": S1}]})
        shutil.rmtree(data / "memory" / "chroma")
        done = turn("w1", {"resume": ANSWERS[500]})  # the waiting question is answered after the wipe
        assert [s["status"] for s in done["plan"]["steps"]] == ["completed"] * 3
        assert any(a.endswith("_report.md") for a in done["artifacts"])
        assert http.get(f"/plans/{done['plan']['planId']}").json()["status"] == "completed"

        shutil.rmtree(data / "memory" / "chroma")  # and again, with a new conversation
        assert "__interrupt__" in turn("w2", {"messages": [{"role": "user", "content": S1}]})
        done = turn("w2", {"resume": ANSWERS[800]})
        assert [s["status"] for s in done["plan"]["steps"]] == ["completed"] * 3
    assert (data / "memory" / "chroma" / "chroma.sqlite3").exists()


def test_a_chroma_directory_deleted_during_a_write_is_reopened_and_the_write_lands(tmp_path, hash_embeddings):
    """Found by the soak test: the deletion can land between the directory check and the write.

    Before: the write failed with chromadb's InternalError ("attempt to write a readonly database" /
    "disk I/O error") and the turn ended with 503 / exit 1.
    """
    from chromadb.api.models.Collection import Collection

    memory, ns, _ = filled_memory(tmp_path / "mem")
    before = memory.search(ns, FACT)[0].metadata["cosine"]
    real_upsert = Collection.upsert
    wiped: list[int] = []

    def wipe_then_upsert(self, *args, **kwargs):  # noqa: ANN001, ANN202
        if not wiped:
            wiped.append(1)
            shutil.rmtree(tmp_path / "mem" / "chroma")
        return real_upsert(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Collection, "upsert", wipe_then_upsert)
        memory.add_messages(ns, [HumanMessage("换成上海再算一次"), AIMessage("好的，地点改为上海")])
        memory.flush(ns)
    assert wiped
    assert any("上海" in h.text for h in memory.search(ns, "上海"))  # the write landed in the new directory
    hits = memory.search(ns, FACT)
    assert hits and FACT in hits[0].text and hits[0].metadata["cosine"] == pytest.approx(before)
    memory.close()
