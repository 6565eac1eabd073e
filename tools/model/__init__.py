"""The chat model on the wire (bounded, fitted, deadlined calls) and checks of what models write."""

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
