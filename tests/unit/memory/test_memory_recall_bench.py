"""The recall benchmark's bookkeeping: an ingestion rate only for stores it really ingested."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from bench.memory_convgen import Conversation, conversation
from bench.memory_recall import ingest_rate, run


def _small() -> Conversation:
    conv = conversation("en", 0)
    messages = conv.messages[:60]
    ids = {str(m.id) for m in messages}
    questions = [q for q in conv.questions if set(q.evidence) <= ids]
    return Conversation("en", 0, messages, questions or conv.questions[:1], conv.version)


def test_a_store_reused_from_the_cache_reports_no_ingestion_rate(tmp_path):
    conv, emb = _small(), DeterministicFakeEmbedding(size=16)
    first = run(conv, emb, ["default"], 20, cache=str(tmp_path))
    messages, seconds = first["ingest"]
    assert messages == 60 and seconds > 0
    assert ingest_rate(messages, seconds).startswith("ingest ") and "msg/s" in ingest_rate(messages, seconds)
    again = run(conv, emb, ["default"], 20, cache=str(tmp_path))
    assert again["ingest"] == (0, 0)
    assert "not timed" in ingest_rate(*again["ingest"])
    assert again["recall"].keys() == first["recall"].keys()  # the same store is still searched
