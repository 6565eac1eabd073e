"""Which failures are worth another attempt, in one place for every node, tool and entry point.

Transient faults (the network, the model endpoint's 5xx and rate limits, a timeout) are retried by
the nodes' `RETRY_POLICY` and, when they persist, leave the run resumable at its last checkpoint.
`MODEL_ERRORS` adds the model's 4xx answers: code that can go on without the model (field
extraction, gists) catches these and keeps its deterministic result. Anything else is a bug or a
bad input and is never retried.
"""

from __future__ import annotations

import httpx
import openai
from langchain_core.exceptions import ModelError
from langgraph.types import RetryPolicy

__all__ = ["MODEL_ERRORS", "RETRY_POLICY", "TRANSIENT_ERRORS"]

TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    ConnectionError,
    TimeoutError,
    httpx.TransportError,
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
)

# Every way a model call can fail without it being our bug: transient faults, HTTP status errors
# (4xx included), and LangChain's own model errors from other chat-model integrations.
MODEL_ERRORS: tuple[type[Exception], ...] = (
    *TRANSIENT_ERRORS,
    openai.APIError,
    httpx.HTTPError,
    ModelError,
)

RETRY_POLICY = RetryPolicy(max_attempts=3, initial_interval=0.5, max_interval=5.0, retry_on=TRANSIENT_ERRORS)
