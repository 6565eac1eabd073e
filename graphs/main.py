"""The plangraph graph: remember → disclose → planner → executor ⇄ sub-agents / ask_user → finalizer → remember.

`graph` is compiled without a checkpointer for `langgraph.json` (the server brings its own);
`build_graph()` compiles the same wiring with whatever checkpointer and store the caller has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore
from langgraph.types import RetryPolicy

from graphs.context import Context
from graphs.state import InputState, OutputState, State, StepInput
from nodes.agent_node import STEP_RETRY, TRANSIENT_ERRORS, make_agent_node, threaded
from nodes.ask_user import make_ask_user
from nodes.disclose import make_disclose
from nodes.executor import executor
from nodes.finalizer import finalizer
from nodes.model_planner import PLANNER_PROMPT
from nodes.planner import make_planner
from nodes.registry import AgentSpec, agents
from nodes.remember import remember, remember_answer

__all__ = ["build_graph", "builder", "graph", "make_builder"]

MODEL_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.5, max_interval=5.0, retry_on=TRANSIENT_ERRORS)


def make_builder(
    specs: Mapping[str, AgentSpec] | None = None, templates: Sequence | None = None
) -> StateGraph[State, Context, InputState, OutputState]:
    """Wire the graph for a set of sub-agents (the registry by default) and workflow templates."""
    specs = agents() if specs is None else specs
    b = StateGraph(State, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    b.add_node("remember_request", remember)
    b.add_node("disclose_planner", make_disclose("planner", PLANNER_PROMPT))
    b.add_node(
        "planner", make_planner(specs, templates), retry_policy=MODEL_RETRY, destinations=("executor", END)
    )
    b.add_node("executor", executor, destinations=(*specs, "ask_user", "finalizer", "executor"))
    b.add_node("ask_user", make_ask_user(specs), destinations=("executor", "ask_user"))
    b.add_node("finalizer", finalizer, retry_policy=MODEL_RETRY)
    b.add_node("remember_answer", remember_answer)
    for name, spec in specs.items():
        b.add_node(name, threaded(make_agent_node(spec)), input_schema=StepInput, retry_policy=STEP_RETRY)
        b.add_edge(name, "executor")
    b.add_edge(START, "remember_request")
    b.add_edge("remember_request", "disclose_planner")
    b.add_edge("disclose_planner", "planner")
    b.add_edge("finalizer", "remember_answer")
    b.add_edge("remember_answer", END)
    return b


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    store: BaseStore | None = None,
    specs: Mapping[str, AgentSpec] | None = None,
    templates: Sequence | None = None,
) -> CompiledStateGraph[State, Context, InputState, OutputState]:
    """Compile the graph with a checkpointer (needed for interrupts and resume) and an optional store."""
    return make_builder(specs, templates).compile(checkpointer=checkpointer, store=store, name="plangraph")


builder = make_builder()
graph = builder.compile(name="plangraph")
