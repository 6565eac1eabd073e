"""remember: writes the conversation's newest message into the planner's block memory.

At the end of a turn (`remember_answer`) it also trims the graph state's messages and, with
`Context.model_summaries` (env PLANGRAPH_MODEL_SUMMARIES=1) and a model configured, has the
model write the `core_semantic` of the newest finished blocks of this turn's namespaces
(extractive otherwise).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.runtime import Runtime

from graphs.context import Context, resolve_context
from graphs.state import State
from memory.tokens import MESSAGE_OVERHEAD, count_tokens, truncate
from nodes.kit.registry import AgentSpec
from nodes.kit.services import RunServices, ServicesFactory
from nodes.planner import route_index
from nodes.routing import RouteIndex
from nodes.standing import judge, judge_with_model
from tools.faults import model_errors

log = logging.getLogger("plangraph.memory")
SUMMARY_PROMPT = "用不超过50个字概括下面这段对话的核心内容（保留地点、数值等关键事实），只输出概括本身。"
SUMMARIES_PER_NAMESPACE = 2  # model calls per namespace per turn, at most
__all__ = ["make_remember", "make_remember_answer"]


def _remember(state: State, svc: RunServices) -> None:
    """Append the newest human or AI message to `planner_{user}_{conversation}` memory (once per id)."""
    messages = [m for m in state.get("messages", []) if isinstance(m, (HumanMessage, AIMessage))]
    if not messages:
        return
    newest = messages[-1]
    memory = svc.agent_memory("planner")
    if newest.id is None or all(m.id != newest.id for m in memory.recent(4)):
        memory.add([newest])


def make_remember(services: ServicesFactory, specs: Mapping[str, AgentSpec] | None = None):  # noqa: ANN201 - a LangGraph node
    """The node that remembers the newest request in the planner's memory, and its long-term facts.

    With `specs`, what the request states as lasting ("我们的电价是0.72", "以后报告都用英文") is
    written to the user's long-term facts (`nodes.standing`; the model judges when configured).
    """
    indexes: dict[str, RouteIndex] = {}

    def remember(state: State, runtime: Runtime[Context]) -> dict:
        """Append the newest human or AI message to the planner's memory (once per id); keep its facts."""
        svc = services(resolve_context(runtime.context))
        _remember(state, svc)
        if specs:
            if "index" not in indexes:
                indexes["index"] = route_index(specs, templates=[])
            _keep_facts(state, svc, specs, indexes["index"])
        return {}

    return remember


def _keep_facts(state: State, svc: RunServices, specs: Mapping[str, AgentSpec], index: RouteIndex) -> None:
    """Write the long-term facts the newest request states to the user's fact store."""
    request = next((m for m in reversed(state.get("messages", [])) if isinstance(m, HumanMessage)), None)
    if request is None or not isinstance(request.content, str):
        return
    model = svc.model_for("step")
    found = (
        judge_with_model(model, request.content, specs, index)
        if model is not None
        else judge(request.content, specs, index)
    )
    for st in found:
        fact = svc.memory.facts.put(
            svc.ctx.user_id, st.key, st.value, st.text, st.said, scope=st.scope,
            conversation_id=svc.ctx.conversation_id, message_id=str(request.id or ""),
            judged_by=st.judged_by, importance=st.importance,
        )  # fmt: skip
        log.info(
            "long-term fact %s of user %s: %s (%s)", fact.fact_id, svc.ctx.user_id, fact.text, st.judged_by
        )


def make_remember_answer(services: ServicesFactory):  # noqa: ANN201 - a LangGraph node
    """The node that remembers the final answer and trims the state's messages."""

    def remember_answer(state: State, runtime: Runtime[Context]) -> dict:
        """Remember the answer, then keep only the newest `state_messages` chat messages in state."""
        return _remember_answer(state, services(resolve_context(runtime.context)))

    return remember_answer


def _remember_answer(state: State, svc: RunServices) -> dict:
    """Remember the final answer, then keep only the newest `state_messages` chat messages in state.

    Every request and answer is in the planner's block memory (this node and `remember_request`),
    so the older copies in the graph state are redundant; without trimming, every checkpoint
    would carry the whole conversation and grow with every turn (bench/graph_checkpoint_bytes.py).
    """
    _remember(state, svc)
    ctx = svc.ctx
    if ctx.model_summaries:
        _summarize_blocks(svc, state)
    keep = ctx.state_messages
    messages = state.get("messages", [])
    if keep <= 0 or len(messages) <= keep:
        return {}
    return {"messages": [RemoveMessage(id=m.id) for m in messages[:-keep] if m.id]}


def _summarize_blocks(svc: RunServices, state: State) -> None:
    """Model-written gists for the newest finished blocks of the planner and this plan's agents."""
    model = svc.model_for("gist")
    if model is None:
        return
    plan = state.get("plan")
    agents = ["planner", *dict.fromkeys(s["agentName"] for s in (plan["steps"] if plan else []))]
    for agent in agents:
        namespace = svc.namespace(agent)
        try:
            svc.memory.summarize(
                namespace, lambda text: _gist(model, text, svc.ctx.token_budget), SUMMARIES_PER_NAMESPACE
            )
        except model_errors() as error:  # the model failed: keep the extractive gist
            log.warning("block summaries for %s skipped: %s: %s", namespace, type(error).__name__, error)
            return


def _gist(model: BaseChatModel, text: str, budget: int) -> str:
    """The model's gist of one block's text; the prompt is cut to the token budget (a block can be long)."""
    room = budget - count_tokens(SUMMARY_PROMPT) - 2 * MESSAGE_OVERHEAD
    # "nostream": LangGraph keeps this call out of the `messages` stream (Studio's chat view).
    reply = model.invoke(
        [SystemMessage(SUMMARY_PROMPT), HumanMessage(truncate(text, max(room, 0)))],
        config={"tags": ["nostream"]},
    )
    return reply.text
