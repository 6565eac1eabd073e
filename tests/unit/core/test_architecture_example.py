"""The example sub-agent of docs/architecture.md, run as written through the real graph."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs.context import Context
from graphs.main import build_graph
from nodes.agents import AGENT_MODULES
from nodes.kit.registry import load_agents

DOC = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"


def _example_module(monkeypatch) -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Adding a sub-agent") :]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    module = types.ModuleType("greeter_example")
    exec(compile(code.group(1), str(DOC), "exec"), module.__dict__)  # noqa: S102 - the doc's own code
    monkeypatch.setitem(sys.modules, "greeter_example", module)
    return "greeter_example"


def test_the_documented_agent_plugs_in_asks_and_resumes(monkeypatch, data_dir):
    specs = load_agents([*AGENT_MODULES, _example_module(monkeypatch)])
    graph = build_graph(checkpointer=InMemorySaver(), specs=specs)
    config = {"configurable": {"thread_id": "hello"}}
    context = Context(user_id="u", conversation_id="hello", data_dir=str(data_dir))
    chunks = list(
        graph.stream(
            {"messages": [{"role": "user", "content": "跟我打个招呼吧"}]},
            config,
            context=context,
            stream_mode="custom",
        )
    )
    state = graph.get_state(config)
    assert [s["agentName"] for s in state.values["plan"]["steps"]] == ["greeter"]
    assert state.interrupts and state.interrupts[0].value["question"] == "请问怎么称呼您？"
    assert any(c.get("agentChatResponse", {}).get("intent") == "greeter_question" for c in chunks)
    result = graph.invoke(Command(resume="小王"), config, context=context)
    step = result["plan"]["steps"][0]
    assert step["status"] == "completed" and step["result"]["output"] == "您好，小王！"
    assert step["result"]["context"]["greeting"].startswith("store://")
    assert "您好，小王" in result["summary"]


def test_a_test_hands_the_graph_its_own_services(tmp_path):
    """No environment, no data dir: the graph uses exactly the stores the factory gives it."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from memory import BlockMemory
    from nodes.kit.services import RunServices
    from tools.plans.store import PlanStore
    from tools.results import ResultsIndex

    memory = BlockMemory(tmp_path / "mine", DeterministicFakeEmbedding(size=16))
    plans, results = PlanStore(tmp_path / "plans.db"), ResultsIndex(tmp_path / "results.db")
    seen: list[Context] = []

    def services(ctx: Context) -> RunServices:
        seen.append(ctx)
        return RunServices(ctx, memory, plans, results, model=None, knowledge=lambda: None)  # type: ignore[arg-type,return-value]

    from fake_agents import SPECS, TEMPLATES

    graph = build_graph(checkpointer=InMemorySaver(), specs=SPECS, templates=TEMPLATES, services=services)
    config = {"configurable": {"thread_id": "t"}}
    context = Context(user_id="u", conversation_id="t", data_dir=str(tmp_path / "unused"))
    graph.invoke({"messages": [{"role": "user", "content": "查询城市然后汇总"}]}, config, context=context)
    graph.invoke(Command(resume="城市是杭州"), config, context=context)
    assert seen and all(c.user_id == "u" for c in seen)
    assert [r.kind for r in results.newest("u", "t", "lookup")] == ["lookup"]
    assert plans.list(user_id="u")[0]["status"] == "completed"
    assert memory.messages("planner_u_t")  # the request was remembered in the memory we gave
    assert not list((tmp_path / "unused").rglob("*"))  # no store was opened in the data dir
