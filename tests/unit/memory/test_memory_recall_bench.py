"""The recall benchmark's bookkeeping: an ingestion rate only for stores it really ingested; --ks budgets."""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from bench.memory_convgen import Conversation, conversation
from bench.memory_recall import KS, ingest_rate, parse_ks, run, window_pool


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


def test_budgets_beyond_k_90_are_columns_of_their_own_and_the_old_ones_stay(tmp_path):
    """`--ks` adds budgets near 1k tokens (k = 120, 150 on short chat turns) beside the old columns."""
    assert parse_ks("150,5,10,120,10") == (5, 10, 120, 150)
    for bad in ("", "5,x", "0,10"):
        with pytest.raises(SystemExit, match="--ks takes"):
            parse_ks(bad)
    assert window_pool(KS) == 100  # the tables before --ks packed from 100 windows
    assert window_pool((5, 150)) == 300  # enough windows to fill the larger budget
    conv, emb = _small(), DeterministicFakeEmbedding(size=16)
    out = run(conv, emb, ["default"], 20, ks=(5, 10, 30))
    budgets = {k: out["recall"][("budget", k)]["all"] for k in (5, 10, 30)}
    assert all(len(v) == len(conv.questions) for v in budgets.values())
    assert all(a <= b <= c for a, b, c in zip(budgets[5], budgets[10], budgets[30], strict=True))
    assert ("BM25 over turns", 30) in out["recall"] and ("BM25 over turns", 50) not in out["recall"]
