"""The plangraph graph: remember → disclose → planner → executor ⇄ sub-agents / revise_plan / ask_user → finalizer → remember.

`graph` is compiled without a checkpointer for `langgraph.json` (the server brings its own);
`build_graph()` compiles the same wiring with the caller's checkpointer (and services).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs.context import Context
from graphs.services import ServiceHub
from graphs.state import InputState, OutputState, State, StepInput
from nodes.agents import agents
from nodes.ask_user import make_ask_user
from nodes.disclose import make_disclose
from nodes.executor import executor
from nodes.finalizer import make_finalizer
from nodes.kit.agent_node import make_agent_node, threaded
from nodes.kit.registry import AgentSpec
from nodes.kit.services import ServicesFactory
from nodes.model_planner import PLANNER_PROMPT
from nodes.planner import make_planner
from nodes.remember import make_remember, make_remember_answer
from nodes.revise_plan import make_revise_plan
from tools.faults import RETRY_POLICY

__all__ = ["build_graph", "builder", "graph", "make_builder"]


def make_builder(
    specs: Mapping[str, AgentSpec] | None = None,
    templates: Sequence | None = None,
    services: ServicesFactory | None = None,
) -> StateGraph[State, Context, InputState, OutputState]:
    """Wire the graph for a set of sub-agents (the shipped ones by default) and workflow templates.

    `services` builds what a run needs from its Context (a new `ServiceHub` when None); every node
    gets its services from it.
    """
    specs = agents() if specs is None else specs
    services = ServiceHub() if services is None else services
    b = StateGraph(State, context_schema=Context, input_schema=InputState, output_schema=OutputState)
    b.add_node("remember_request", make_remember(services, specs))
    b.add_node("disclose_planner", make_disclose("planner", PLANNER_PROMPT, services))
    b.add_node(
        "planner",
        make_planner(specs, services, templates),
        retry_policy=RETRY_POLICY,
        destinations=("executor", END),
    )
    b.add_node(
        "executor", executor, destinations=(*specs, "revise_plan", "ask_user", "finalizer", "executor")
    )
    b.add_node(
        "revise_plan",
        make_revise_plan(specs, services),
        retry_policy=RETRY_POLICY,
        destinations=("executor",),
    )
    b.add_node("ask_user", make_ask_user(specs, services), destinations=("executor", "ask_user"))
    b.add_node("finalizer", make_finalizer(services), retry_policy=RETRY_POLICY)
    b.add_node("remember_answer", make_remember_answer(services))
    for name, spec in specs.items():
        b.add_node(
            name, threaded(make_agent_node(spec, services)), input_schema=StepInput, retry_policy=RETRY_POLICY
        )
        b.add_edge(name, "executor")
    b.add_edge(START, "remember_request")
    b.add_edge("remember_request", "disclose_planner")
    b.add_edge("disclose_planner", "planner")
    b.add_edge("finalizer", "remember_answer")
    b.add_edge("remember_answer", END)
    return b


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    specs: Mapping[str, AgentSpec] | None = None,
    templates: Sequence | None = None,
    services: ServicesFactory | None = None,
) -> CompiledStateGraph[State, Context, InputState, OutputState]:
    """Compile the graph with a checkpointer (needed for interrupts and resume).

    Pass the `ServiceHub` (or a factory of your own) that the rest of your process uses, so the
    graph and your code share one block memory per data directory.
    """
    return make_builder(specs, templates, services).compile(checkpointer=checkpointer, name="plangraph")


builder = make_builder()
graph = builder.compile(name="plangraph")
