"""Prompt tokens per model call over a long scripted session through the whole graph (model mode).

    PYTHONPATH=. .venv/bin/python bench/graph_prompt_tokens.py [--turns 500]

Every turn is one request on the same conversation via PlanRunner, with PLANGRAPH_MODEL set and
OPENAI_BASE_URL pointing at tests/support/openai_server.py's ScriptedOpenAIServer (a real
OpenAI-compatible HTTP server on 127.0.0.1). The scripted model plans one knowledge step with
`create_plan`, answers with a citation, keeps the agent's internal plan unchanged and writes the
summary. Tokens are the server's `usage.prompt_tokens` count of each request's messages (1 per CJK
character, ⌈len/4⌉ per other word, 4 per message; tool schemas not counted), grouped by the
calling component (its system prompt). The scripted model's internal-plan (EP) replies are rejected by the EP format check, so every
turn shows the maximum of 3 reflection calls (a worst case for call count, not for prompt size).
Target: flat, at or under the budget (PLANGRAPH_TOKEN_BUDGET,
2000 by default).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench.graph_common import machine, table, write_section
from tests.support.openai_server import ScriptedOpenAIServer, prompt_tokens, reply_text, reply_tool_call

PLAN = {"steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答电价政策问题", "dependsOn": []}]}
QUESTIONS = [
    "分布式光伏余电上网电价怎么定？",
    "工商业分布式光伏需要备案吗？",
    "光伏组件的衰减一般怎么算？",
    "自发自用余电上网和全额上网有什么区别？",
]
KINDS = [("你是多智能体系统的规划器", "planner"), ("你是总结器", "finalizer")]


def kind_of(body: dict) -> str:
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "") or ""
    text = " ".join(str(m.get("content") or "") for m in body["messages"])
    for prefix, name in KINDS:
        if system.startswith(prefix):
            return name
    if "@epupdatelog@" in text:
        return "internal plan (EP) reflection"
    if "知识助手" in system:
        return "knowledge answer"
    return "other: " + system[:20]


def respond(body: dict):  # noqa: ANN201
    if any(t["function"]["name"] == "create_plan" for t in body.get("tools", [])):
        return reply_tool_call("create_plan", PLAN)
    last = str(body["messages"][-1].get("content") or "")
    if "@epupdatelog@" in last and "digraph" in last:
        graph = last[last.index("digraph") : last.rindex("}") + 1]
        return reply_text(f"{graph}\n@epupdatelog@无需更新@epupdatelog@")
    return reply_text("根据资料[1]，按当地燃煤基准价结算，具体以当地政策为准。")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=500)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="plangraph-bench-tokens-"))
    budget = int(os.environ.get("PLANGRAPH_TOKEN_BUDGET", "2000"))
    with ScriptedOpenAIServer(responder=respond) as server:
        os.environ.update(
            PLANGRAPH_MODEL="scripted",
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="bench",
            PLANGRAPH_DATA_DIR=str(work / "data"),
        )
        from plangraph.runner import PlanRunner

        per_turn: list[dict[str, list[int]]] = []
        start = time.perf_counter()
        with PlanRunner.open(user_id="bench", conversation_id="long", checkpoint_url="") as runner:
            for turn in range(1, args.turns + 1):
                seen = len(server.requests)
                outcome = runner.run(f"{QUESTIONS[turn % len(QUESTIONS)]}（第 {turn} 轮）")
                assert outcome.plan and outcome.plan["steps"][0]["status"] == "completed", outcome.summary
                calls: dict[str, list[int]] = {}
                for body in server.requests[seen:]:
                    calls.setdefault(kind_of(body), []).append(prompt_tokens(body["messages"]))
                per_turn.append(calls)
                if turn % 50 == 0 or turn == 1:
                    print(
                        turn,
                        {k: max(v) for k, v in calls.items()},
                        f"{time.perf_counter() - start:.0f}s",
                        flush=True,
                    )
        elapsed = time.perf_counter() - start
    kinds = sorted({k for calls in per_turn for k in calls})
    marks = sorted({1, 10, 50, 100, 250, args.turns} & set(range(1, args.turns + 1)))
    rows = []
    for kind in kinds:
        series = [max(c[kind]) for c in per_turn if kind in c]
        at = {t: max(per_turn[t - 1][kind]) if kind in per_turn[t - 1] else "–" for t in marks}
        calls = sum(len(c.get(kind, [])) for c in per_turn)
        rows.append([kind, calls, *[at[t] for t in marks], max(series)])
    headers = ["component", "calls", *[f"turn {t}" for t in marks], "max"]
    text = table(headers, rows)
    print(text)
    worst = max(max(max(v) for v in c.values()) for c in per_turn)
    verdict = "within" if worst <= budget else "over"
    write_section(
        "graph-prompt-tokens",
        f"""## Prompt tokens per model call over a {args.turns}-turn session (whole graph, model mode)

Command: `PYTHONPATH=. .venv/bin/python bench/graph_prompt_tokens.py --turns {args.turns}`
({elapsed / 60:.1f} min; {machine()}).

{args.turns} requests on one conversation through `PlanRunner` in model mode against
ScriptedOpenAIServer on 127.0.0.1 (each turn: plan one knowledge step by `create_plan`, answer,
internal-plan reflection, summary). Numbers are prompt tokens of the largest call of that kind in
the turn (server's count: 1 per CJK character, ⌈len/4⌉ per other word, 4 per message; tool schemas
excluded).

{text}

Largest prompt of the whole session: **{worst} tokens** — {verdict} the {budget}-token budget.
""",
    )


if __name__ == "__main__":
    main()
