"""Warm-up: a server process runs two throwaway turns before it takes requests.

A fresh process pays one-time costs on its first turn: importing Chroma and matplotlib, loading
the chart fonts, the packaged MiniLM's first inference, the 词林 thesaurus, jieba's word
frequencies and the routing index — 1.2 s of the first conversation on a quiet machine, more
under load (bench/serve_first_request.py, docs/benchmarks.md) — which the first user of every
worker (after a deploy, a restart, a replaced worker) waited for. `warm_up` runs a Chinese and
an English request through a graph of its own, offline (no model call, whatever PLANGRAPH_MODEL
says; remote embeddings replaced by the hash ones), in a temporary data dir that is removed
afterwards, with the server's other settings (embeddings, KB folders). Nothing reaches the
server's data dir, its Chroma server or its model endpoint; the one-time loads are process-wide,
so the real turns find them done.
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import replace

from langgraph.checkpoint.memory import InMemorySaver

from graphs.context import Context
from graphs.main import build_graph
from graphs.services import ServiceHub
from tools.kb.corpus import SHIPPED_KB_DIR
from tools.kb.meaning import warm_up as warm_meaning

__all__ = ["WARM_UP_REQUESTS", "warm_up"]

log = logging.getLogger(__name__)

LOCAL_EMBEDDINGS = ("minilm", "hash")  # others are an endpoint: nothing to load here, calls to save
WARM_UP_REQUESTS = (
    "帮我算一下杭州工商业屋顶500kW光伏的收益，并生成报告",
    "What is the payback of a 10 kW residential system in Shanghai?",
)


def warm_up(context: Context | None = None) -> float:
    """Run `WARM_UP_REQUESTS` offline in a throwaway data dir; the seconds it took.

    A failure is logged, not raised: a server that cannot warm up still serves (its first turn
    then pays the loads, or shows the real error to whoever asks).
    """
    from plangraph.runner import PlanRunner  # the runner imports this package's server side lazily

    started = time.perf_counter()
    base = context or Context()
    with tempfile.TemporaryDirectory(prefix="plangraph-warm-up-") as data_dir:
        hub = ServiceHub()
        try:
            graph = build_graph(checkpointer=InMemorySaver(), services=hub)
            for i, request in enumerate(WARM_UP_REQUESTS):
                ctx = replace(
                    base,
                    data_dir=data_dir,
                    chroma_url="",
                    model="",
                    embeddings=base.embeddings
                    if (base.embeddings.strip().lower() or "minilm") in LOCAL_EMBEDDINGS
                    else "hash",
                    user_id="warm-up",
                    conversation_id=f"warm-up-{i}",
                )
                PlanRunner(graph, ctx, services=hub).run(request)
            warm_meaning([SHIPPED_KB_DIR])  # the knowledge base's meaning model and the notes' vectors
        except Exception:
            log.warning("warm-up turn failed; the first request will load what it needs", exc_info=True)
        finally:
            hub.close()
    seconds = time.perf_counter() - started
    log.info("warmed up in %.1f s", seconds)
    return seconds
