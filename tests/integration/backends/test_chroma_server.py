"""PLANGRAPH_CHROMA_URL=http://host:port : block and knowledge vectors in a real Chroma server."""

from __future__ import annotations

import chromadb
import pytest
from chromadb.config import Settings
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.vectors import chroma_client, vector_key
from plangraph.runner import PlanRunner
from tools.kb.corpus import SHIPPED_KB_DIR
from tools.kb.index import KnowledgeIndex

S1 = "帮我生成一份光伏经济测算报告"
S1_ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"


def _server(url: str):
    host, port = url.removeprefix("http://").split(":")
    return chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))


def _stored(url: str, prefix: str) -> dict[str, int]:
    """Collections on the server whose name starts with `prefix`, with their sizes."""
    client = _server(url)
    return {
        c.name: client.get_collection(c.name).count()
        for c in client.list_collections()
        if c.name.startswith(prefix)
    }


def test_block_memory_keeps_vectors_in_the_server(chroma_url, tmp_path):
    before = _stored(chroma_url, "plangraph_blocks_")
    memory = BlockMemory(tmp_path / "mem", DeterministicFakeEmbedding(size=32), chroma_url=chroma_url)
    ns = memory.scope("pv_calc", "dora", "c1")
    memory.add_messages(
        ns,
        [
            HumanMessage("项目在苏州工业园区，屋顶面积3000平方米"),
            AIMessage("好的，已记录项目地点和屋顶面积。"),
            HumanMessage("贷款利率按4.2%计算"),
            AIMessage("收到，贷款利率4.2%。"),
        ],
    )
    memory.flush(ns)
    blocks = memory.list_blocks(ns)
    assert blocks
    hits = memory.search(ns, "贷款利率")
    assert hits and "4.2%" in hits[0].text

    [(name, count)] = [(n, c) for n, c in _stored(chroma_url, "plangraph_blocks_").items() if n not in before]
    assert count == len(blocks)
    got = _server(chroma_url).get_collection(name).get(include=["metadatas"])
    assert sorted(got["ids"]) == sorted(vector_key(ns, b["block_id"]) for b in blocks)
    assert not (tmp_path / "mem" / "chroma").exists()  # no local PersistentClient was opened
    memory.close()


def test_knowledge_index_on_the_server(chroma_url, tmp_path):
    index = KnowledgeIndex(
        tmp_path, [SHIPPED_KB_DIR], DeterministicFakeEmbedding(size=48), chroma_url=chroma_url
    )
    report = index.refresh()
    assert report.added >= 10
    hits = index.search("分布式光伏 余电上网 全额上网 的区别", k=3)
    assert hits and any("上网" in h.passage.text for h in hits)
    [(_, count)] = _stored(chroma_url, "kb-").items()
    assert count >= report.added
    # no local PersistentClient (the catalog of users' documents, kb/uploads.sqlite, is local like plans.sqlite)
    assert not (tmp_path / "kb" / "chroma").exists()
    again = KnowledgeIndex(
        tmp_path / "elsewhere", [SHIPPED_KB_DIR], DeterministicFakeEmbedding(size=48), chroma_url=chroma_url
    )
    assert again.refresh().unchanged == report.added  # a second process finds the index on the server


def test_s1_end_to_end_with_chroma_url(chroma_url, data_dir, monkeypatch):
    monkeypatch.setenv("PLANGRAPH_CHROMA_URL", chroma_url)
    before = sum(_stored(chroma_url, "plangraph_blocks_").values())
    with PlanRunner.open(user_id="erin", conversation_id="ch-1", checkpoint_url="") as runner:
        asked = runner.run(S1)
        assert asked.interrupt is not None and asked.interrupt["seqNo"] == 0
        done = runner.resume(S1_ANSWER)
    assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
    assert done.artifacts
    assert sum(_stored(chroma_url, "plangraph_blocks_").values()) > before
    assert not (data_dir / "memory" / "chroma").exists()


def test_unreachable_server_is_a_clear_connection_error(tmp_path):
    from tests.support.local_server import free_port

    with pytest.raises(ConnectionError, match="PLANGRAPH_CHROMA_URL"):
        chroma_client(tmp_path, f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ValueError, match="http://host:port"):
        chroma_client(tmp_path, "127.0.0.1:8000")


_WRITER_OR_READER = """
import sys
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage
from memory import BlockMemory

role, path, url = sys.argv[1], sys.argv[2], sys.argv[3] or None
memory = BlockMemory(path, DeterministicFakeEmbedding(size=8), chroma_url=url)
ns = memory.scope("pv_calc", "u1", "c1")
if role == "read":
    vectors = memory._vectors
    print(len(vectors.query([0.1] * 8, [ns], 100)), flush=True)  # loads the collection
    sys.stdin.readline()  # another process writes meanwhile
    print(len(vectors.query([0.1] * 8, [ns], 100)), flush=True)
else:
    memory.add_messages(ns, [m for i in range(6) for m in (
        HumanMessage(f"{role} question {i} on topic {role}{i}", id=f"{role}h{i}"),
        AIMessage(f"{role} answer {i}", id=f"{role}a{i}"))])
    memory.flush(ns)
memory.close()
"""


def test_vectors_another_process_adds_are_found_through_the_server(chroma_url, tmp_path):
    """Why `plangraph serve --processes N` runs a Chroma server (plangraph.serve_chroma).

    Two processes on one local Chroma folder each keep their own copy of a collection's index: a
    process that had read it did not find the 3 vectors another process added later (measured).
    Through a server every process finds every vector.
    """
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[3])

    def run(*args: str, **kwargs):  # noqa: ANN202
        return subprocess.Popen(
            [sys.executable, "-c", _WRITER_OR_READER, *args],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            **kwargs,
        )

    first = run("alpha", str(tmp_path), chroma_url)
    first.communicate(timeout=120)
    assert first.returncode == 0
    reader = run("read", str(tmp_path), chroma_url)
    assert reader.stdin is not None and reader.stdout is not None
    before = int(reader.stdout.readline())
    second = run("beta", str(tmp_path), chroma_url)
    second.communicate(timeout=120)
    assert second.returncode == 0
    after, _ = reader.communicate("go\n", timeout=120)
    assert before > 0
    assert int(after) > before  # the other process's new blocks are found
