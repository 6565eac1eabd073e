"""Prompt tokens of every planner model call over a long conversation run through the graph.

    PYTHONPATH=. .venv/bin/python bench/memory_graph_longconv.py --turns 200 --budget 2000

Each turn is one `PlanRunner.run` in model mode against the scripted OpenAI-compatible server on
127.0.0.1 (tests/support/openai_server.py): the planner's model answers with `create_plan`
(one knowledge step), the knowledge agent and the finalizer with a fixed ~150-token text. User
requests are the user turns of bench/memory_dataset.py (Chinese and English, with planted
facts). Tokens are counted on the wire messages with the budget's tokenizer (memory.tokens).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

PLAN = {"steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答用户的问题", "dependsOn": []}]}
ANSWER = (
    "根据已有资料：分布式光伏余电上网电量按当地燃煤发电基准价结算，自发自用部分按用户电价节省电费；"
    "测算时请结合屋顶面积、装机容量、电价和贷款利率等参数。"
) * 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--embeddings", choices=["minilm", "hash"], default="minilm")
    args = ap.parse_args()
    data = tempfile.mkdtemp(prefix="bench-graph-longconv-")
    os.environ.update(
        PLANGRAPH_DATA_DIR=data,
        PLANGRAPH_EMBEDDINGS=args.embeddings,
        PLANGRAPH_MODEL="scripted",
        OPENAI_API_KEY="bench",
        PLANGRAPH_TOKEN_BUDGET=str(args.budget),
        PLANGRAPH_MODEL_TIMEOUT="30",
    )
    from langchain_core.messages import HumanMessage, convert_to_messages

    from bench.memory_dataset import build
    from memory.tokens import count_messages_tokens
    from plangraph.runner import PlanRunner
    from tests.support.openai_server import ScriptedOpenAIServer, reply_text, reply_tool_call
    from tests.support.services import graph_memory

    def is_planner(body: dict) -> bool:
        return any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))

    def answer(body: dict):  # noqa: ANN202 - a Reply
        return reply_tool_call("create_plan", PLAN) if is_planner(body) else reply_text(ANSWER)

    messages, _ = build(max(args.turns, 200))
    requests = [str(m.content) for m in messages if isinstance(m, HumanMessage)][: args.turns]
    checkpoints = {1, 10, 25, 50, 100, 150, 200, 300, 500, args.turns}
    sizes: list[int] = []
    print("| turn | planner prompt tokens | planner history tokens |\n|---:|---:|---:|")
    started = time.perf_counter()
    with ScriptedOpenAIServer(responder=answer) as server:
        os.environ["OPENAI_BASE_URL"] = server.base_url
        with PlanRunner.open(user_id="bench", conversation_id="c1") as runner:
            for turn, request in enumerate(requests, 1):
                before = len(server.requests)
                runner.run(request)
                planner = [r for r in server.requests[before:] if is_planner(r)]
                sizes += [count_messages_tokens(convert_to_messages(r["messages"])) for r in planner]
                if turn in checkpoints:
                    history = count_messages_tokens(graph_memory(data).messages("planner_bench_c1"))
                    print(f"| {turn} | {sizes[-1]} | {history} |", flush=True)
    elapsed = time.perf_counter() - started
    print(
        f"\n{len(sizes)} planner calls: max {max(sizes)}, median {statistics.median(sizes):.0f}, "
        f"min {min(sizes)} tokens (budget {args.budget}); {elapsed / len(requests):.2f} s per turn"
    )


if __name__ == "__main__":
    main()
