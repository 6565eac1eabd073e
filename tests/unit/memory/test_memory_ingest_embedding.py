"""Ingestion embeds each text once, also in writes of more than `RECENT_VECTORS` closures or messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from memory import BlockMemory
from memory.vectors import RECENT_VECTORS


class _Counting(DeterministicFakeEmbedding):
    """Hash vectors, counting the documents embedded."""

    documents: int = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Count, then embed."""
        self.documents += len(texts)
        return super().embed_documents(texts)


def _pairs(n: int) -> list:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):  # 6 minutes apart: every pair closes its own block
        at = {"created_at": (start + timedelta(minutes=6 * i)).isoformat()}
        out += [
            HumanMessage(f"question {i}", additional_kwargs=at),
            AIMessage(f"answer {i}", additional_kwargs=at),
        ]
    return out


def test_a_big_write_embeds_every_closure_and_message_once(tmp_path):
    n = RECENT_VECTORS + 44
    for message_vectors, texts in ((False, n), (True, 2 * n)):
        emb = _Counting(size=16)
        memory = BlockMemory(tmp_path / str(message_vectors), emb, message_vectors=message_vectors)
        memory.add_messages("ns", _pairs(n))
        assert emb.documents == texts  # the vectors computed ahead of the write are all used
        assert len(memory.list_blocks("ns")) == n
        memory.close()
