"""The chat model on the wire (bounded, fitted, deadlined calls) and checks of what models write.

The names are loaded on first use: `tools.model.wire` pulls in `langchain_openai` and `openai`
(about half a second of CPU), which an offline run never needs. `tools.model.checks` and
`tools.model.window` import without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.model.window import SAFE_CONTEXT, TokenGauge, fit_request, window_from_models
    from tools.model.wire import (
        AsyncDeadlineTransport,
        DeadlineTransport,
        Endpoint,
        WireChatOpenAI,
        call_deadline,
        describe_rejection,
    )

__all__ = [
    "SAFE_CONTEXT",
    "AsyncDeadlineTransport",
    "DeadlineTransport",
    "Endpoint",
    "TokenGauge",
    "WireChatOpenAI",
    "call_deadline",
    "describe_rejection",
    "fit_request",
    "window_from_models",
]

_WHERE = {
    "SAFE_CONTEXT": "window",
    "TokenGauge": "window",
    "fit_request": "window",
    "window_from_models": "window",
    "AsyncDeadlineTransport": "wire",
    "DeadlineTransport": "wire",
    "Endpoint": "wire",
    "WireChatOpenAI": "wire",
    "call_deadline": "wire",
    "describe_rejection": "wire",
}


def __getattr__(name: str) -> Any:
    """Import the submodule that defines `name` when it is first asked for."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'tools.model' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tools.model.{where}"), name)
