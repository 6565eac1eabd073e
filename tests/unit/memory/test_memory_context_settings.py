"""The memory tier settings are run settings (Context fields with environment fallbacks)."""

from __future__ import annotations

import pytest

from graphs.context import Context
from graphs.services import ServiceHub


def test_the_context_sets_the_graph_memorys_tier_settings(data_dir, monkeypatch):
    default = ServiceHub()(Context(conversation_id="c", data_dir=str(data_dir))).memory.settings
    assert (default.compress_at, default.facts_share, default.summary_every) == (0.8, 0.15, 8)
    monkeypatch.setenv("PLANGRAPH_MEMORY_COMPRESS_AT", "1.0")
    monkeypatch.setenv("PLANGRAPH_MEMORY_FACTS_SHARE", "0.1")
    monkeypatch.setenv("PLANGRAPH_MEMORY_SUMMARY_EVERY", "16")
    hub = ServiceHub()
    settings = hub(Context(conversation_id="c", data_dir=str(data_dir))).memory.settings
    assert (settings.compress_at, settings.facts_share, settings.summary_every) == (1.0, 0.1, 16)
    given = hub(Context(conversation_id="c", data_dir=str(data_dir), memory_summary_every=4)).memory
    assert given.settings.summary_every == 4  # a context field wins over the environment


@pytest.mark.parametrize(
    ("field", "value", "env"),
    [
        ("memory_compress_at", 0.0, "PLANGRAPH_MEMORY_COMPRESS_AT"),
        ("memory_compress_at", 1.5, "PLANGRAPH_MEMORY_COMPRESS_AT"),
        ("memory_facts_share", 1.0, "PLANGRAPH_MEMORY_FACTS_SHARE"),
        ("memory_summary_every", 0, "PLANGRAPH_MEMORY_SUMMARY_EVERY"),
    ],
)
def test_a_memory_setting_out_of_range_is_refused_with_its_name(field, value, env):
    with pytest.raises(ValueError, match=f"{field}=.*out of range; use .*env {env}"):
        Context(conversation_id="c", **{field: value})
