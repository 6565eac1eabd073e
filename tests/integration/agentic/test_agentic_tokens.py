"""Every model call of a model-mode conversation with agentic steps stays within the token budget.

The short version of bench/graph_agentic_tokens.py: the same scripted conversation (planner with
`search_block` rounds, knowledge and assistant tool loops over several turns, PV steps with field
extraction and internal-plan reflection, plan revisions, standing facts, block gists, summaries)
for 24 turns against a real OpenAI-compatible server on 127.0.0.1, prompt tokens counted by the
server.
"""

from __future__ import annotations

import pytest

from bench.graph_agentic_tokens import session

BUDGET = 2000


@pytest.mark.slow
def test_no_model_call_of_an_agentic_conversation_passes_the_token_budget(data_dir, monkeypatch):
    monkeypatch.setenv("PLANGRAPH_TOKEN_BUDGET", str(BUDGET))
    report = session(24, data_dir)
    calls = [
        (turn, kind, tokens)
        for turn, c in enumerate(report.per_turn, 1)
        for kind, v in c.items()
        for tokens in v
    ]
    over = [c for c in calls if c[2] > BUDGET]
    assert not over, f"calls over the {BUDGET}-token budget (turn, component, tokens): {over}"
    kinds = {kind for _, kind, _ in calls}
    assert {
        "planner",
        "agent loop turn: knowledge",
        "agent loop turn: assistant",
        "plan revision",
        "EP reflection",
        "PV field extraction",
        "standing-fact judge",
        "summary (finalizer)",
    } <= kinds, kinds
    assert report.fitted > 0  # loop prompts had to be fitted: the bound was exercised, not just met
    assert report.wire_cut == 0  # measured as the nodes built them, not as the wire-level fitter cut them
    assert report.stops["answered"] > 0 and set(report.stops) <= {"answered"}, report.stops
    assert report.revisions["applied"] > 0 and set(report.steps) == {"completed"}, (
        report.revisions,
        report.steps,
    )
