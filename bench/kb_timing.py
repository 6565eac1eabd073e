"""Time the knowledge index with the packaged MiniLM: model load, full index, no-op refresh, search.

`search` is the mean over the questions including the first; `first_search` is the first alone (it
loads the meaning model and embeds the notes' questions and words, tools/kb/meaning.py) and
`search_p50` the median of the others.

Run: HF_HUB_OFFLINE=1 ANONYMIZED_TELEMETRY=False .venv/bin/python -m bench.kb_timing
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from memory.embeddings import default_embeddings
from tools.kb.corpus import SHIPPED_KB_DIR
from tools.kb.index import KnowledgeIndex

QUESTIONS = ["分布式光伏并网流程是怎样的", "一个绿证对应多少电量", "组件多久清洗一次"] * 5


def main() -> None:
    embeddings = default_embeddings()
    start = time.perf_counter()
    embeddings.embed_query("预热")
    load = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as data:
        index = KnowledgeIndex(Path(data), [SHIPPED_KB_DIR], embeddings)
        start = time.perf_counter()
        index.refresh()
        full = time.perf_counter() - start
        start = time.perf_counter()
        index.refresh()
        noop = time.perf_counter() - start
        times = []
        for question in QUESTIONS:
            start = time.perf_counter()
            index.search(question, k=5)
            times.append(time.perf_counter() - start)
        search = sum(times) / len(times)
        print(
            f"documents={index.size} model_load={load:.1f}s full_index={full:.1f}s "
            f"noop_refresh={noop * 1000:.0f}ms search={search * 1000:.0f}ms "
            f"first_search={times[0] * 1000:.0f}ms search_p50={statistics.median(times[1:]) * 1000:.0f}ms"
        )


if __name__ == "__main__":
    main()
