"""The one place that builds what a run needs from its Context.

`ServiceHub(ctx)` returns the run's `RunServices`. The heavy parts — block memory, plan store,
results index, knowledge index — are opened once per data directory (and embedding / Chroma
setting) and shared by every run the hub serves; the chat model is made per run from the
Context. A compiled graph owns one hub; the CLI, the HTTP server and `PlanRunner` hand theirs to
`build_graph(services=...)` so that they and the graph share the same stores. Tests hand the
graph a factory of their own (`build_graph(services=lambda ctx: RunServices(...))`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from graphs.context import Context, model_api_key
from memory import BlockMemory
from memory.embeddings import make_embeddings
from nodes.kit.services import RunServices
from tools.plans.store import PlanStore
from tools.results import ResultsIndex

if TYPE_CHECKING:
    from tools.kb.index import KnowledgeIndex
    from tools.model.wire import Endpoint

__all__ = ["ServiceHub", "chat_model", "embeddings_for"]


def embeddings_for(ctx: Context) -> Embeddings:
    """The embedding model the Context names (`minilm`, `hash` or `openai`)."""
    return make_embeddings(
        ctx.embeddings, ctx.embeddings_model, ctx.model_base_url, model_api_key(), ctx.model_cache_dir
    )


def chat_model(ctx: Context, kind: str = "step", endpoint: Endpoint | None = None) -> BaseChatModel | None:
    """The chat model for `kind` of call at `ctx.model_base_url` (`tools.model.WireChatOpenAI`), or None offline.

    Its output bound is `ctx.max_tokens(kind)`, its whole-call deadline `ctx.model_timeout`; requests are
    fitted into `endpoint`'s window (`ctx.model_context`, else what the server reports).
    """
    if not ctx.model:
        return None
    import httpx

    from tools.model.wire import AsyncDeadlineTransport, DeadlineTransport, Endpoint, WireChatOpenAI

    key = model_api_key() or "not-needed"
    if endpoint is None:
        endpoint = Endpoint(ctx.model_base_url, ctx.model, key, ctx.model_context)
    return WireChatOpenAI(
        model=ctx.model,
        api_key=key,  # type: ignore[arg-type]
        base_url=ctx.model_base_url or None,
        timeout=ctx.model_timeout,
        max_retries=0,  # one HTTP request per call: the nodes' RETRY_POLICY decides about another
        streaming=True,
        # ... except a call with tools: llama_cpp.server cannot stream under tool_choice="auto" (the
        # stream breaks off, "Automatic streaming tool choice is not supported") exactly when the
        # model calls a tool; no such reply is shown to users token by token anyway
        disable_streaming="tool_calling",
        stream_usage=True,
        max_tokens=ctx.max_tokens(kind),  # type: ignore[call-arg]
        http_client=httpx.Client(transport=DeadlineTransport(ctx.model_timeout, verify=endpoint.tls())),
        # ainvoke / astream: the same whole-call deadline (without it openai's own async client
        # would wait out each keep-alive ping as a fresh read timeout)
        http_async_client=httpx.AsyncClient(
            transport=AsyncDeadlineTransport(ctx.model_timeout, verify=endpoint.tls())
        ),
        deadline=ctx.model_timeout,
        endpoint=endpoint,
    )


class ServiceHub:
    """Builds `RunServices` from a Context, sharing stores per data directory."""

    def __init__(self) -> None:
        self._open: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.RLock()

    def __call__(self, ctx: Context) -> RunServices:
        """The services of the run described by `ctx`."""
        root = ctx.data_path
        return RunServices(
            ctx=ctx,
            memory=self.memory(ctx),
            plans=self._shared(("plans", root), lambda: PlanStore(root / "plans.sqlite")),
            results_index=self._shared(("results", root), lambda: ResultsIndex(root / "results.sqlite")),
            model=chat_model(ctx, "step", self.endpoint(ctx)),
            knowledge=lambda: self.knowledge(ctx),
            models=lambda kind: chat_model(ctx, kind, self.endpoint(ctx)),
        )

    def endpoint(self, ctx: Context) -> Endpoint | None:
        """What is learned about the model endpoint (window, token counts), shared by the runs it serves."""
        if not ctx.model:
            return None
        from tools.model.wire import Endpoint

        key = ("endpoint", ctx.model_base_url, ctx.model, ctx.model_context)
        return self._shared(
            key, lambda: Endpoint(ctx.model_base_url, ctx.model, model_api_key(), ctx.model_context)
        )

    def memory(self, ctx: Context) -> BlockMemory:
        """The block memory of `ctx.data_dir` (data under `<data_dir>/memory/`)."""
        root = ctx.data_path / "memory"
        tiers = (ctx.memory_compress_at, ctx.memory_facts_share, ctx.memory_summary_every)
        return self._shared(
            ("memory", root, ctx.embeddings, ctx.embeddings_model, ctx.chroma_url, *tiers),
            lambda: BlockMemory(
                root,
                embeddings_for(ctx),
                chroma_url=ctx.chroma_url or None,
                compress_at=ctx.memory_compress_at,
                facts_share=ctx.memory_facts_share,
                summary_every=ctx.memory_summary_every,
            ),
        )

    def plans(self, ctx: Context) -> PlanStore:
        """The plan store of `ctx.data_dir`."""
        return self(ctx).plans

    def knowledge(self, ctx: Context) -> KnowledgeIndex:
        """The knowledge index of `ctx.data_dir` as `ctx.user_id` sees it.

        The shipped notes, the folders of `ctx.kb_dirs`, the shared documents and the user's own
        (`plangraph kb add`), never another user's.
        """
        return self.knowledge_base(ctx).for_user(ctx.user_id)

    def knowledge_base(self, ctx: Context) -> KnowledgeIndex:
        """The knowledge index of `ctx.data_dir` over all its documents (not scoped to a user)."""
        from tools.kb.corpus import kb_dirs
        from tools.kb.index import KnowledgeIndex, embedding_id

        dirs = kb_dirs(ctx.kb_dirs)
        embeddings = embeddings_for(ctx)
        key = ("kb", ctx.data_path, embedding_id(embeddings), ctx.chroma_url, *map(str, dirs))
        return self._shared(
            key, lambda: KnowledgeIndex(ctx.data_path, dirs, embeddings, chroma_url=ctx.chroma_url or None)
        )

    def close(self) -> None:
        """Close every store this hub opened (those that can be closed); the hub can open them again."""
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for service in opened:
            close = getattr(service, "close", None)
            if callable(close):
                close()

    def _shared(self, key: tuple[Any, ...], make: Any) -> Any:
        with self._lock:
            if key not in self._open:
                self._open[key] = make()
            return self._open[key]
