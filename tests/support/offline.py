"""The offline flags every test, benchmark and spawned server runs with (the Makefile sets them too)."""

from __future__ import annotations

__all__ = ["OFFLINE_ENV"]

# No model downloads, no telemetry, no version checks; matplotlib without a display.
OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "1",
    "LANGSMITH_TRACING": "false",
    "ORT_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
    "MPLBACKEND": "Agg",
}
