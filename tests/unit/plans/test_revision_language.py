"""The plan-revision call speaks the request's language (system prompt, headings, the fix request)."""

from __future__ import annotations

import pytest

from nodes.agents import agents
from nodes.revise_plan import review
from tests.support.openai_server import ScriptedOpenAIServer, reply_text
from tools.contracts import AgentExecResult, ExecutionPlan, PlanStep
from tools.plans.revise import (
    REVISE_FIX_PROMPT,
    REVISE_FIX_PROMPT_EN,
    REVISE_PROMPT,
    REVISE_PROMPT_EN,
    prompt_dot,
)

DONE = AgentExecResult(recordId="r0", output="IRR 8.2%", status="completed", context={})


def _plan(query: str, lang: str | None) -> ExecutionPlan:
    steps = [
        PlanStep(
            seqNo=0, agentName="pv_calc", requirement="calc", status="completed", dependsOn=[], result=DONE
        ),
        PlanStep(
            seqNo=1,
            agentName="sensitivity",
            requirement="sens",
            status="not_started",
            dependsOn=[0],
            result=None,
        ),
    ]
    return ExecutionPlan(
        planId="plan_l", userQuery=query, steps=steps, context={"lang": lang} if lang else {}
    )


def _unchanged(plan: ExecutionPlan) -> str:
    return f"@epupdatelog@\nno change\n@epupdatelog@\n@EP@\n*id=plan_l\n*graph={prompt_dot(plan)}@EP@"


@pytest.mark.parametrize(
    ("query", "lang", "system", "fix", "heading"),
    [
        ("Calculate a 500 kW rooftop in Hangzhou and run a sensitivity analysis", "en", REVISE_PROMPT_EN,
         REVISE_FIX_PROMPT_EN, "The user's request: "),
        ("Calculate a 500 kW rooftop in Hangzhou and run a sensitivity analysis", None, REVISE_PROMPT_EN,
         REVISE_FIX_PROMPT_EN, "The user's request: "),
        ("帮我测算杭州500kW工商业屋顶并做敏感性分析", "zh", REVISE_PROMPT, REVISE_FIX_PROMPT, "用户的需求："),
    ],
)  # fmt: skip
def test_the_revision_call_follows_the_plan_language(query, lang, system, fix, heading):
    plan = _plan(query, lang)
    with ScriptedOpenAIServer([reply_text("I think it is fine."), reply_text(_unchanged(plan))]) as server:
        entry, revision = review(server.chat_model(), plan, [0], agents())
    first, second = server.requests
    assert entry["status"] == "unchanged" and revision is None
    assert first["messages"][0]["content"] == system
    request = first["messages"][1]["content"]
    assert request.startswith(heading + query)
    assert ("Current plan (*id=plan_l):" in request) == (system == REVISE_PROMPT_EN)
    assert ("- step 0 (pv_calc) completed: IRR 8.2%" in request) == (system == REVISE_PROMPT_EN)
    assert second["messages"][-1]["content"].startswith(fix.split("{error}")[0])
