"""The pinned understanding cases in model mode: a model that plans right loses nothing the words say.

The local OpenAI-compatible server (tests/support/openai_server.py) stands in for a model that
plans each turn as the case's label says (a `create_plan` call with the expected agents and the
user's words as each step's requirement), fills no fields itself and writes one short sentence in
the request's language for anything else. Parameters, questions and reply language must then come
out exactly as offline: read from the user's words and answers, not from the model.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, reply_text, reply_tool_call
from tests.understanding.test_understanding import CASES, FOLLOW_UP_CASES, assert_right, bench

# a calculation from English words, a change with no trigger phrase, a reverse target, a bad
# value named back, and small talk: each kind of turn the model path must not break
MODEL_CASES = ["calc-en-05", "change-en-05", "reverse-zh-02", "bad-zh-01", "oos-en-01"]


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            content = message["content"]
            return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return ""


def _planning_model(case: dict):
    """A responder that plans every turn of `case` as labelled and otherwise says little."""
    requests = [t["request"] for t in case["turns"]]
    plans = [t["expect"]["plans"][0] for t in case["turns"]]

    def respond(body: dict[str, Any]) -> Reply:
        tools = {t["function"]["name"] for t in body.get("tools", [])}
        said = _last_user_text(body)
        if "create_plan" in tools:
            turn = next((i for i, r in reversed(list(enumerate(requests))) if r in said), 0)
            steps = [
                {"seqNo": i, "agentName": name, "requirement": requests[turn], "dependsOn": deps}
                for i, (name, deps) in enumerate(plans[turn])
            ]
            return reply_tool_call("create_plan", {"steps": steps})
        english = bench.detect_language(said) == "en"
        return reply_text("Done." if english else "已完成。")

    return respond


@pytest.mark.slow
@pytest.mark.parametrize("case_id", MODEL_CASES)
def test_pinned_case_in_model_mode(case_id, model_env, tmp_path):
    case = CASES[case_id]
    with ScriptedOpenAIServer([], responder=_planning_model(case)) as server:
        model_env(server, timeout=10)
        observed = bench.run_case(case, tmp_path / "runs")
        planned = [
            r
            for r in server.requests
            if any(t["function"]["name"] == "create_plan" for t in r.get("tools", []))
        ]
    assert planned, "the model was never asked to plan"
    assert_right(case, observed, ("params", "question", "language"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "suppose-zh",
        "relative-en",
        "reverse-carry",
        "recall-pointer-zh",
        "wh-values-en",
        "free-wording-zh",
        # session 10
        "reverse-bare-en",
        "self-all-zh",
        "recall-cost-en",
        "load-answer-zh",
        "both-types-zh",
        "standing-impossible-zh",
    ],
)
def test_follow_up_on_the_case_in_model_mode(name, model_env, tmp_path):
    # the model plans each turn as labelled; the values still come from the user's words and the case
    case = FOLLOW_UP_CASES[name]
    with ScriptedOpenAIServer([], responder=_planning_model(case)) as server:
        model_env(server, timeout=10)
        observed = bench.run_case(case, tmp_path / "runs")
    assert_right(case, observed)
