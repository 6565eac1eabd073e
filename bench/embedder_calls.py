"""What the embedder does in one conversation: query and document calls, texts and their CPU.

    PYTHONPATH=. .venv/bin/python bench/embedder_calls.py

One process, MiniLM (the default embedder), a fresh data dir: the S1 conversation (request,
answer, then "change the address to Shanghai and recompute"), then the same in English. For each,
the conversation's CPU seconds (after the runner is open) and, per embedder method, the calls,
the texts and the CPU seconds of the calling threads (ONNX Runtime runs on the caller's thread).
It answers whether batching the query embeddings of concurrent turns (issue 16) could pay: it can
save at most part of the query-embedding CPU.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from memory.embeddings import MiniLMEmbeddings

CONVERSATIONS = {
    "S1 (Chinese)": (
        "帮我生成一份光伏经济测算报告",
        "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW",
        "其他参数不变，将地址更换到上海市后重新进行测算",
    ),
    "S1 (English)": (
        "Please make a PV economics report",
        "Hangzhou Yuhang, commercial and industrial, 500 kW",
        "Keep everything else, change the location to Shanghai and recompute",
    ),
}


def _counting() -> dict[str, list[float]]:
    """Wrap MiniLM's embed methods to count calls, texts and the calling thread's CPU seconds."""
    stats: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    lock = threading.Lock()
    for name in ("embed_query", "embed_documents"):
        original = getattr(MiniLMEmbeddings, name)

        def counted(self: Any, arg: Any, _original: Any = original, _name: str = name) -> Any:
            start = time.thread_time()
            out = _original(self, arg)
            spent = time.thread_time() - start
            with lock:
                row = stats[_name]
                row[0] += 1
                row[1] += len(arg) if isinstance(arg, list) else 1
                row[2] += spent
            return out

        setattr(MiniLMEmbeddings, name, counted)
    return stats


def main() -> None:
    """Run both conversations and print one line per conversation and embedder method."""
    from plangraph.runner import PlanRunner

    stats = _counting()
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"load average {load} at the start")
    with tempfile.TemporaryDirectory() as data:
        for label, (request, answer, follow_up) in CONVERSATIONS.items():
            stats.clear()
            conversation = "zh" if "Chinese" in label else "en"
            with PlanRunner.open(user_id="u", conversation_id=conversation, data_dir=data) as runner:
                cpu = time.process_time()
                if runner.run(request).interrupt:
                    runner.resume(answer)
                runner.run(follow_up)
                cpu = time.process_time() - cpu
            print(f"{label}: conversation CPU {cpu:.2f} s")
            for name in ("embed_query", "embed_documents"):
                calls, texts, spent = stats.get(name, [0, 0, 0.0])
                print(f"  {name}: {int(calls)} calls, {int(texts)} texts, {spent * 1000:.0f} ms CPU")
    print(f"load average {Path('/proc/loadavg').read_text().split()[0]} at the end")


if __name__ == "__main__":
    main()
