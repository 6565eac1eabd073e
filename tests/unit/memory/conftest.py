import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from memory import BlockMemory


@pytest.fixture
def memory(tmp_path):
    mem = BlockMemory(tmp_path / "mem", DeterministicFakeEmbedding(size=16))
    yield mem
    mem.close()
