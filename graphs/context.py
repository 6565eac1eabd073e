"""Run settings (the graph's `context_schema`), with environment fallbacks in one place."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = ["Context", "SettingError", "model_api_key", "resolve_context"]


class SettingError(ValueError):
    """A setting (environment variable or context field) that cannot be used; the message names it."""


def _env_number(name: str, default: int | float, kind: type[int] | type[float]) -> Any:
    """The number in environment variable `name` (else `default`); SettingError naming it when it is not one."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return kind(default)
    try:
        return kind(raw)
    except ValueError:
        example = "8000" if kind is int else "0.8"
        what = "whole number" if kind is int else "number"
        raise SettingError(
            f"{name}={raw!r} is not a {what}; set it to one (e.g. {name}={example}) or unset it"
        ) from None


def model_api_key() -> str:
    """The model endpoint's key (env OPENAI_API_KEY): never a Context field, so Studio never shows it."""
    return os.environ.get("OPENAI_API_KEY", "")


@dataclass(kw_only=True)
class Context:
    """Per-run settings; every field falls back to an environment variable."""

    user_id: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_USER_ID", "default"),
        metadata={"description": "Whose memory and plans this run uses (env PLANGRAPH_USER_ID)."},
    )
    conversation_id: str = field(
        default="",
        metadata={"description": "Conversation id; empty means the thread_id of the run config."},
    )
    model: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_MODEL", ""),
        metadata={
            "description": "OpenAI-compatible chat model name (env PLANGRAPH_MODEL); empty = offline "
            "deterministic planner and agents. Base URL and key: OPENAI_BASE_URL, OPENAI_API_KEY."
        },
    )
    token_budget: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_TOKEN_BUDGET", 2000, int),
        metadata={"description": "Max prompt tokens of one model call (env PLANGRAPH_TOKEN_BUDGET)."},
    )
    data_dir: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_DATA_DIR", ".plangraph"),
        metadata={"description": "Where memory, plans, artifacts live (env PLANGRAPH_DATA_DIR)."},
    )
    model_timeout: float = field(
        default_factory=lambda: _env_number("PLANGRAPH_MODEL_TIMEOUT", 60, float),
        metadata={
            "description": "Wall-clock seconds one model call may take, streaming included; keep-alive pings "
            "do not extend it; a cut call is not retried (env PLANGRAPH_MODEL_TIMEOUT). Model planning gets "
            "this much in all its rounds together."
        },
    )
    model_context: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_MODEL_CONTEXT", 0, int),
        metadata={
            "description": "The model's context window in tokens (env PLANGRAPH_MODEL_CONTEXT); every request "
            "(prompt, tool schemas, output bound) is fitted into it. 0 = what the server's /v1/models reports, "
            "else 4096."
        },
    )
    model_max_tokens_plan: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_MODEL_MAX_TOKENS_PLAN", 600, int),
        metadata={"description": "Output bound of a planning call (env PLANGRAPH_MODEL_MAX_TOKENS_PLAN)."},
    )
    model_max_tokens_step: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_MODEL_MAX_TOKENS_STEP", 500, int),
        metadata={
            "description": "Output bound of a sub-agent's call: field extraction, knowledge answer, plan "
            "reflection (env PLANGRAPH_MODEL_MAX_TOKENS_STEP)."
        },
    )
    model_max_tokens_summary: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_MODEL_MAX_TOKENS_SUMMARY", 500, int),
        metadata={
            "description": "Output bound of the final summary (env PLANGRAPH_MODEL_MAX_TOKENS_SUMMARY)."
        },
    )
    model_max_tokens_gist: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_MODEL_MAX_TOKENS_GIST", 80, int),
        metadata={"description": "Output bound of a block gist (env PLANGRAPH_MODEL_MAX_TOKENS_GIST)."},
    )

    state_messages: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_STATE_MESSAGES", 20, int),
        metadata={
            "description": "Chat messages kept in the graph state after a run (env PLANGRAPH_STATE_MESSAGES); "
            "older ones live in the planner's block memory and are found by search. 0 keeps all."
        },
    )

    model_summaries: bool = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_MODEL_SUMMARIES", "").strip() == "1",
        metadata={
            "description": "With a model: the model writes block gists (core_semantic) at the end of a turn, "
            "at most 2 calls per agent namespace (env PLANGRAPH_MODEL_SUMMARIES=1). Off: extractive gists."
        },
    )

    agent_max_turns: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_AGENT_MAX_TURNS", 6, int),
        metadata={
            "description": "With a model: most model turns of one agentic step's tool loop "
            "(env PLANGRAPH_AGENT_MAX_TURNS); past it the agent answers on its offline path."
        },
    )
    agent_step_tokens: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_AGENT_STEP_TOKENS", 24000, int),
        metadata={
            "description": "With a model: most tokens (prompt + reply, summed over turns) one agentic step "
            "may spend (env PLANGRAPH_AGENT_STEP_TOKENS); past it the agent answers on its offline path."
        },
    )

    plan_revisions: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_PLAN_REVISIONS", 2, int),
        metadata={
            "description": "With a model: most revisions the model may make to one plan's remaining steps "
            "(add, drop, reorder) as steps complete (env PLANGRAPH_PLAN_REVISIONS); each completed step is "
            "reviewed once (one model call, one retry) until the bound is reached. 0 = plans never change."
        },
    )

    memory_compress_at: float = field(
        default_factory=lambda: _env_number("PLANGRAPH_MEMORY_COMPRESS_AT", 0.8, float),
        metadata={
            "description": "Share of the token budget past which a disclosed window compresses its oldest "
            "messages into block gists (env PLANGRAPH_MEMORY_COMPRESS_AT; 0 < x <= 1, 1 = only past the "
            "budget). docs/memory.md, bench/memory_tiers.py."
        },
    )
    memory_facts_share: float = field(
        default_factory=lambda: _env_number("PLANGRAPH_MEMORY_FACTS_SHARE", 0.15, float),
        metadata={
            "description": "Most of a window's token budget the user's long-term facts may take "
            "(env PLANGRAPH_MEMORY_FACTS_SHARE; 0 <= x < 1)."
        },
    )
    memory_summary_every: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_MEMORY_SUMMARY_EVERY", 8, int),
        metadata={
            "description": "Stale short-term blocks are merged into summary lines every this many new "
            "blocks of a namespace (env PLANGRAPH_MEMORY_SUMMARY_EVERY; >= 1). bench/memory_tiers.py."
        },
    )

    max_request_chars: int = field(
        default_factory=lambda: _env_number("PLANGRAPH_MAX_REQUEST_CHARS", 8000, int),
        metadata={"description": "Longest accepted request in characters (env PLANGRAPH_MAX_REQUEST_CHARS)."},
    )
    model_base_url: str = field(
        default_factory=lambda: os.environ.get("OPENAI_BASE_URL", ""),
        metadata={"description": "Base URL of the OpenAI-compatible endpoint (env OPENAI_BASE_URL)."},
    )
    embeddings: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_EMBEDDINGS", "minilm"),
        metadata={
            "description": "Embedding model for memory and the knowledge index (env PLANGRAPH_EMBEDDINGS): "
            "`minilm` (packaged, offline), `hash` (tests), `openai` (at model_base_url)."
        },
    )
    embeddings_model: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_EMBEDDINGS_MODEL", "text-embedding-3-small"),
        metadata={"description": "Model name when embeddings = openai (env PLANGRAPH_EMBEDDINGS_MODEL)."},
    )
    model_cache_dir: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_MODEL_CACHE", ""),
        metadata={
            "description": "Where the packaged MiniLM's one-time ONNX export is kept (env PLANGRAPH_MODEL_CACHE); "
            "empty = ~/.cache/plangraph."
        },
    )
    chroma_url: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_CHROMA_URL", ""),
        metadata={
            "description": "Chroma server (`http://host:port`) for memory vectors and the knowledge index "
            "(env PLANGRAPH_CHROMA_URL); empty = a local Chroma folder in the data dir."
        },
    )
    kb_dirs: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_KB_DIR", ""),
        metadata={
            "description": "Extra knowledge-base folders of .md/.txt documents, os.pathsep-separated "
            "(env PLANGRAPH_KB_DIR); the shipped notes are always searched."
        },
    )
    templates_dirs: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_TEMPLATES_DIR", ""),
        metadata={
            "description": "Extra workflow-template folders (.dot), os.pathsep-separated "
            "(env PLANGRAPH_TEMPLATES_DIR)."
        },
    )
    pv_data: str = field(
        default_factory=lambda: os.environ.get("PLANGRAPH_PV_DATA", ""),
        metadata={
            "description": "Folder of the PV tables (yield.csv, feed_in.csv, defaults.csv) replacing the "
            "shipped ones (env PLANGRAPH_PV_DATA)."
        },
    )

    def __post_init__(self) -> None:
        """Reject settings out of range (SettingError), naming the setting and its environment variable."""
        checks: list[tuple[str, str, bool, str]] = [
            (
                "memory_compress_at",
                "PLANGRAPH_MEMORY_COMPRESS_AT",
                0 < self.memory_compress_at <= 1,
                "0 < x <= 1",
            ),
            (
                "memory_facts_share",
                "PLANGRAPH_MEMORY_FACTS_SHARE",
                0 <= self.memory_facts_share < 1,
                "0 <= x < 1",
            ),
            (
                "memory_summary_every",
                "PLANGRAPH_MEMORY_SUMMARY_EVERY",
                self.memory_summary_every >= 1,
                "x >= 1",
            ),
        ]
        checks += [
            ("token_budget", "PLANGRAPH_TOKEN_BUDGET", self.token_budget > 0, "x > 0"),
            ("max_request_chars", "PLANGRAPH_MAX_REQUEST_CHARS", self.max_request_chars > 0, "x > 0"),
            ("model_timeout", "PLANGRAPH_MODEL_TIMEOUT", self.model_timeout > 0, "x > 0"),
        ]
        for name, env, ok, valid in checks:
            if not ok:
                raise SettingError(
                    f"{name}={getattr(self, name)!r} is out of range; use {valid} (env {env}, or the context field)"
                )

    def max_tokens(self, kind: str) -> int:
        """The output bound of a kind of model call: "plan", "step", "summary" or "gist"."""
        return int(getattr(self, f"model_max_tokens_{kind}"))

    @property
    def data_path(self) -> Path:
        """`data_dir` as a resolved path (created on demand)."""
        path = Path(self.data_dir).expanduser().resolve()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            why = "it is a file, not a folder" if path.is_file() else error.strerror
            raise SettingError(
                f"the data directory {path} cannot be used ({why}); set --data-dir or "
                "PLANGRAPH_DATA_DIR to a folder you can write to"
            ) from None
        return path


def resolve_context(context: Context | dict | None, config: Mapping[str, Any] | None = None) -> Context:
    """A complete Context from whatever the caller gave (object, dict from a server, or nothing).

    The conversation id defaults to the run's thread_id (from `config`, or the running graph's
    config when called inside a node), so thread = conversation.
    """
    if isinstance(context, Context):
        ctx = context
    else:
        known = {f.name for f in fields(Context)}
        given = {k: v for k, v in (context or {}).items() if k in known and v not in (None, "")}
        ctx = Context(**given)
    if not ctx.conversation_id:
        if config is None:
            from langgraph.config import get_config

            config = get_config()
        thread_id = (config.get("configurable") or {}).get("thread_id")
        ctx = Context(
            **{
                **{f.name: getattr(ctx, f.name) for f in fields(Context)},
                "conversation_id": str(thread_id or "default"),
            }
        )
    return ctx
