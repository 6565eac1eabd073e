"""Agentic sub-agents against a real OpenAI-compatible server on 127.0.0.1 (scripted tool calls).

Each misbehaving model (unknown tools, endless tool calls, malformed JSON arguments, the same
question twice) ends in a clear, bounded outcome and leaves a thread that takes the next request.
"""

from __future__ import annotations

import json

from plangraph.runner import PlanRunner
from tests.support.openai_server import (
    ScriptedOpenAIServer,
    reply_malformed_tool_call,
    reply_text,
    reply_tool_call,
    reply_tool_calls,
    reply_unknown_tool_call,
)


def _plan(agent: str, requirement: str):
    steps = [{"seqNo": 0, "agentName": agent, "requirement": requirement, "dependsOn": []}]
    return reply_tool_call("create_plan", {"steps": steps})


def _tools(body) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def _summary(body):
    """The finalizer's summary (the only request without tools); any other unscripted call is a failure."""
    if _tools(body):
        raise AssertionError(f"unscripted tool request: {sorted(_tools(body))}")
    return reply_text("总结：已完成。")


def _loop_requests(server) -> list[dict]:
    return [r for r in server.requests if "ask_user" in _tools(r)]


def _tool_messages(body) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def test_knowledge_agent_searches_then_answers_with_checked_citations(model_env, data_dir):
    script = [
        _plan("knowledge", "回答余电上网电价政策"),
        reply_tool_call("knowledge_search", {"query": "余电上网 上网电价"}),
        reply_text("余电上网部分按当地燃煤基准价结算[1]，资料之外的[9]不算。"),
    ]
    with ScriptedOpenAIServer(script, responder=_summary) as server:
        model_env(server)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="a1") as runner:
            outcome = runner.run("分布式光伏余电上网电价怎么定？", on_chunk=chunks.append)
            saved = list(runner.graph.checkpointer.list({"configurable": {"thread_id": "a1"}}))
        loop = _loop_requests(server)
    # a checkpoint per loop turn, under the step's namespace (what Studio shows inside the step)
    turns = [c for c in saved if c.config["configurable"]["checkpoint_ns"].startswith("knowledge:")]
    assert {c.metadata.get("step") for c in turns} >= {1, 2, 3}
    step = outcome.plan["steps"][0]
    assert step["status"] == "completed"
    context = step["result"]["context"]
    assert context["agentic"] == {"turns": 2, "tokens": context["agentic"]["tokens"], "stop": "answered"}
    assert [c["n"] for c in context["citations"]] == [1]  # [9] was never shown to the model
    assert step["result"]["output"].startswith(
        "余电上网部分按当地燃煤基准价结算[1]，资料之外的不算。\n\n参考来源：\n[1] 《"
    )
    assert len(loop) == 2
    assert {"knowledge_search", "search_block", "list_blocks", "load", "find_results"} <= _tools(loop[0])
    for body in loop:
        assert [m["role"] for m in body["messages"]].count("system") == 1
    assert "[1]" in _tool_messages(loop[1])[0]["content"]  # the numbered passages reached the model
    calls = [c["content"] for c in chunks if c["index"] == 0 and c["content"].startswith("调用工具")]
    assert calls == ['调用工具 knowledge_search({"query": "余电上网 上网电价"})']


def test_an_english_request_gets_english_tool_notices(model_env, data_dir):
    script = [
        _plan("knowledge", "How is surplus PV power priced?"),
        reply_tool_call("knowledge_search", {"query": "surplus export price"}),
        reply_text("Surplus power is settled at the local coal benchmark price [1]."),
    ]
    with ScriptedOpenAIServer(script, responder=_summary) as server:
        model_env(server)
        chunks: list[dict] = []
        with PlanRunner.open(user_id="u", conversation_id="a-en") as runner:
            outcome = runner.run("How is surplus rooftop PV power priced in China?", on_chunk=chunks.append)
    assert outcome.plan["steps"][0]["status"] == "completed"
    step_chunks = [c["content"] for c in chunks if c["index"] == 0]
    assert 'Calling tool knowledge_search({"query": "surplus export price"})' in step_chunks
    assert not any(c.startswith("调用工具") for c in step_chunks)


def test_unknown_tool_and_malformed_arguments_come_back_as_errors_listing_what_is_valid(model_env, data_dir):
    script = [
        _plan("knowledge", "回答并网流程"),
        reply_unknown_tool_call("web_search", {"q": "并网流程"}),
        reply_malformed_tool_call("knowledge_search", '{"query": "并网'),
        reply_tool_call("knowledge_search", {"query": 17}),  # wrong type: the schema is shown back
        reply_tool_calls([("list_blocks", {})] * 9),  # one call past the per-turn cap
        reply_tool_call("knowledge_search", {"query": "分布式光伏 并网流程"}),
        reply_text("并网流程见资料[1]。"),
    ]
    with ScriptedOpenAIServer(script, responder=_summary) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="a2") as runner:
            outcome = runner.run("分布式光伏并网流程是怎样的？")
        loop = _loop_requests(server)
    assert outcome.plan["steps"][0]["status"] == "completed"
    assert len(loop) == 6
    unknown = _tool_messages(loop[1])[-1]["content"]
    assert unknown.startswith("Error: unknown tool 'web_search'; available: knowledge_search, search_block")
    assert "ask_user" in unknown
    assert "not valid JSON" in _tool_messages(loop[2])[-1]["content"]
    assert _tool_messages(loop[3])[-1]["content"].startswith(
        "Error: invalid arguments for 'knowledge_search'"
    )
    assert '"query"' in _tool_messages(loop[3])[-1]["content"]
    capped = [m["content"] for m in _tool_messages(loop[4])[-9:]]
    assert [c.startswith("Error: at most 8 tool calls per turn") for c in capped] == [False] * 8 + [True]


def test_a_model_that_never_stops_calling_tools_is_cut_at_the_turn_bound(model_env, data_dir, monkeypatch):
    monkeypatch.setenv("PLANGRAPH_AGENT_MAX_TURNS", "3")

    def model(body):
        if "create_plan" in _tools(body):
            return _plan("knowledge", "回答组件清洗周期")
        if "knowledge_search" in _tools(body):
            return reply_tool_call("knowledge_search", {"query": "组件 清洗"})
        return reply_text("光伏组件一般每年清洗数次[1]。")  # the offline path's model answer

    with ScriptedOpenAIServer([], responder=model) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="a3") as runner:
            outcome = runner.run("光伏组件多久清洗一次？")
            loop_calls = len(_loop_requests(server))
            again = runner.run("户用光伏需要备案吗？")  # the thread takes the next request
    step = outcome.plan["steps"][0]
    assert loop_calls == 3
    assert step["status"] == "completed"
    agentic = step["result"]["context"]["agentic"]
    assert agentic["stop"] == "exhausted" and "limit of 3" in agentic["reason"]
    assert "参考来源" in step["result"]["output"] or step["result"]["context"].get("detail")
    assert again.plan["steps"][0]["status"] == "completed"


def test_a_question_from_inside_the_loop_resumes_the_loop_and_is_not_asked_twice(model_env, data_dir):
    script = [
        _plan("knowledge", "回答上网电价"),
        reply_tool_call("ask_user", {"question": "您的项目在哪个省？"}),
        reply_tool_call("ask_user", {"question": "您的项目在哪个省?"}),  # the same question again
        reply_tool_call("knowledge_search", {"query": "浙江 燃煤基准价"}),
        reply_text("浙江余电上网按燃煤基准价结算[1]。"),
    ]
    with ScriptedOpenAIServer(script, responder=_summary) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="a4") as runner:
            first = runner.run("余电上网电价是多少？")
            waiting = runner.current_plan()
            after_ask = len(server.requests)
            done = runner.resume("浙江")
        loop = _loop_requests(server)
    assert first.interrupt is not None and first.interrupt["question"] == "您的项目在哪个省？"
    assert waiting["steps"][0]["status"] == "interrupted"
    assert done.interrupt is None and done.plan["steps"][0]["status"] == "completed"
    assert after_ask == 2 and len(loop) == 4  # no turn was repeated after the answer
    resumed = loop[1]
    answered = _tool_messages(resumed)[-1]
    assert answered["content"] == "浙江"
    asking = next(m for m in resumed["messages"] if m.get("tool_calls"))
    assert answered["tool_call_id"] == asking["tool_calls"][0]["id"]
    repeated = _tool_messages(loop[2])[-1]["content"]
    assert "already asked" in repeated and "浙江" in repeated
    assert done.plan["steps"][0]["result"]["context"]["agentic"]["turns"] == 4


def test_the_general_assistant_calls_the_pv_tools_and_reads_their_errors(model_env, data_dir):
    script = [
        _plan("assistant", "估算杭州一个工商业屋顶的收益"),
        reply_tool_call("pv_calculate", {"location": "杭州", "project_type": "工商业"}),
        reply_tool_call("pv_calculate", {"location": "杭州", "project_type": "工商业", "capacity_kw": 500}),
        reply_tool_call("find_results", {"kind": "pv_case"}),
        reply_text("杭州 500kW 工商业项目已测算完成。"),
    ]
    with ScriptedOpenAIServer(script, responder=_summary) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="a5") as runner:
            outcome = runner.run("帮我看看杭州一个工商业屋顶值不值得装光伏")
        loop = _loop_requests(server)
    assert outcome.plan["steps"][0]["status"] == "completed"
    assert outcome.plan["steps"][0]["result"]["output"] == "杭州 500kW 工商业项目已测算完成。"
    missing = _tool_messages(loop[1])[-1]["content"]
    assert missing.startswith("Error:") and "capacity_kw" in missing
    case = json.loads(_tool_messages(loop[2])[-1]["content"])
    assert case["case_id"].startswith("store://") and case["results"]["irr"] > 0
    found = _tool_messages(loop[3])[-1]["content"]
    assert case["case_id"] in found and '"kind": "pv_case"' in found


def test_the_step_token_budget_stops_the_loop_before_the_call_that_would_pass_it(
    model_env, data_dir, monkeypatch
):
    monkeypatch.setenv("PLANGRAPH_AGENT_STEP_TOKENS", "1200")
    script = [
        _plan("knowledge", "回答余电上网电价"),
        reply_tool_call("knowledge_search", {"query": "余电上网 上网电价 燃煤基准价"}),
    ]

    def rest(body):
        assert "ask_user" not in _tools(body), "no loop turn may follow the budget stop"
        return reply_text(
            "余电上网按燃煤基准价结算[1]。" if "知识助手" in body["messages"][0]["content"] else "总结。"
        )

    with ScriptedOpenAIServer(script, responder=rest) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="a6") as runner:
            outcome = runner.run("余电上网电价是多少？")
        loop = _loop_requests(server)
    agentic = outcome.plan["steps"][0]["result"]["context"]["agentic"]
    assert len(loop) == 1
    assert agentic["stop"] == "exhausted" and "token budget of 1200" in agentic["reason"]
    assert outcome.plan["steps"][0]["status"] == "completed"  # answered on the offline path


def test_a_later_step_reads_an_earlier_steps_memory_only_by_its_todo_id(model_env, data_dir):
    steps = [
        {"seqNo": 0, "agentName": "knowledge", "requirement": "回答组件清洗周期", "dependsOn": []},
        {"seqNo": 1, "agentName": "assistant", "requirement": "据此安排运维计划", "dependsOn": [0]},
    ]
    script = [
        reply_tool_call("create_plan", {"steps": steps}),
        reply_tool_call("knowledge_search", {"query": "组件 清洗 周期"}),
        reply_text("组件一般每年清洗2到4次[1]。"),
    ]
    with ScriptedOpenAIServer(script, responder=_summary) as server:
        model_env(server)
        with PlanRunner.open(user_id="u", conversation_id="a7") as runner:
            server.enqueue(
                lambda body: reply_tool_call("search_block", {"query": "清洗"}),
                lambda body: reply_tool_call("search_todo", {"todo_id": "todo_nope_0", "query": "清洗"}),
                lambda body: reply_tool_call(
                    "search_todo", {"todo_id": _todo_in(body), "query": "组件 清洗"}
                ),
                reply_text("运维计划：每季度清洗一次组件。"),
            )
            outcome = runner.run("光伏组件多久清洗一次？然后帮我安排运维计划")
        loop = _loop_requests(server)
    first, second = outcome.plan["steps"]
    todo0 = first["result"]["context"]["todo_id"]
    assert todo0.startswith("todo_") and todo0 != second["result"]["context"]["todo_id"]
    assistant = [b for b in loop if "search_todo" in _tools(b)]
    assert len(assistant) == 4 and not any("search_todo" in _tools(b) for b in loop[:2])
    own = _tool_messages(assistant[1])[-1]["content"]
    assert "清洗2到4次" not in own  # its own memory (its todo) does not hold the knowledge step's blocks
    unknown = _tool_messages(assistant[2])[-1]["content"]
    assert unknown.startswith("Error:") and todo0 in unknown
    found = _tool_messages(assistant[3])[-1]["content"]
    assert "清洗2到4次" in found
    assert second["status"] == "completed"


def _todo_in(body) -> str:
    """The earlier step's todo id, as the model reads it in the search_todo tool's description."""
    tool = next(t for t in body["tools"] if t["function"]["name"] == "search_todo")
    return tool["function"]["description"].rsplit("Earlier steps: ", 1)[1].rstrip(".").split(", ")[0]
