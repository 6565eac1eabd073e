"""Agentic agents offline, and the loop's bookkeeping (closures, resuming after an answer)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage

from nodes.agents import agents
from nodes.agents.assistant import AGENT as ASSISTANT
from nodes.kit.agentic import ASK_USER, LoopState, closures, resume_messages, saved_loop
from nodes.kit.step import InMemoryAgentMemory, StepContext, todo_id_of
from plangraph.runner import PlanRunner


def _ctx(data_dir, text: str) -> StepContext:
    return StepContext(
        plan_id="plan_abc",
        seq_no=1,
        agent_name="assistant",
        requirement=text,
        user_query=text,
        plan_context={},
        deps={},
        user_id="u",
        conversation_id="c",
        data_dir=data_dir,
        memory=InMemoryAgentMemory(),
    )


def test_the_assistant_offline_says_honestly_what_the_agents_can_do(data_dir):
    result = ASSISTANT.run(_ctx(data_dir, "帮我订一张去北京的机票"))
    assert result["status"] == "completed" and result["context"] == {"out_of_scope": True}
    assert result["output"].startswith("抱歉，这个问题超出了我能处理的范围。我可以：")
    assert "通用助手" not in result["output"]  # it lists the other agents, not itself
    english = ASSISTANT.run(_ctx(data_dir, "book me a flight to Beijing"))
    assert english["output"].startswith("Sorry, that is outside what I can help with.")


def test_the_offline_planner_never_routes_to_the_model_only_assistant(data_dir):
    assert agents()["assistant"].offline is False and agents()["assistant"].agentic is True
    with PlanRunner.open(user_id="u", conversation_id="off1") as runner:
        outcome = runner.run("帮我订一张去北京的机票")
        policy = runner.run("分布式光伏并网流程是怎样的？")
    assert outcome.plan is None and outcome.summary.startswith("抱歉")
    assert [s["agentName"] for s in policy.plan["steps"]] == ["knowledge"]
    assert "agentic" not in policy.plan["steps"][0]["result"]["context"]  # the workflow ran


def _call(call_id: str, name: str, **args) -> dict:
    return {"id": call_id, "name": name, "args": args}


def test_a_pending_question_is_not_written_to_memory_as_an_open_closure():
    state = LoopState(
        messages=[
            AIMessage("", tool_calls=[_call("c1", "knowledge_search", query="并网")]),
            ToolMessage("[1] …", tool_call_id="c1"),
            AIMessage(
                "", tool_calls=[_call("c2", ASK_USER, question="哪个省？"), _call("c3", "find_results")]
            ),
            ToolMessage("没有结果", tool_call_id="c3"),
        ],
        turns=2,
        tokens=100,
        asked=["哪个省？"],
        stop="asking",
        reason="",
        question="哪个省？",
        pending="c2",
    )
    kept = closures(state)
    assert [getattr(m, "tool_call_id", None) or m.tool_calls[0]["id"] for m in kept] == ["c1", "c1"]
    resumed = resume_messages(saved_loop(state), "浙江")
    assert resumed["turns"] == 2 and resumed["asked"] == ["哪个省？"]
    last = resumed["messages"][-1]
    assert isinstance(last, ToolMessage) and last.tool_call_id == "c2" and last.content == "浙江"
    assert len(closures(resumed)) == 5  # the answered question closes that turn


def test_todo_ids_differ_per_step_and_plan():
    assert todo_id_of("plan_0123456789abcdef", 0) == "todo_0123456789ab_0"
    assert len({todo_id_of(p, s) for p in ("plan_a", "plan_b") for s in (0, 1)}) == 4
