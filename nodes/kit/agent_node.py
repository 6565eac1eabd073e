"""Wraps a registered sub-agent as a graph node that runs exactly one plan step."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.runnables import Runnable
from langgraph._internal._runnable import RunnableCallable
from langgraph.runtime import Runtime

from graphs.context import Context, resolve_context
from graphs.state import StepInput
from nodes.kit.agentic import AGENT_LOOP
from nodes.kit.ep import start_ep
from nodes.kit.registry import AgentSpec
from nodes.kit.services import ServicesFactory
from nodes.kit.step import StepContext, todo_id_of
from tools.contracts import AgentChatResponse, AgentExecResult, StreamChunk
from tools.faults import is_service_fault
from tools.results import Results

__all__ = ["BRIEF_CHARS", "brief", "by_reference", "make_agent_node", "threaded"]

log = logging.getLogger("plangraph.executor")


# Sub-agents are synchronous. Under the async API (ainvoke/astream, `langgraph dev`) LangGraph
# runs sync nodes on the event loop's default executor — min(32, cores + 4) threads, 6 on two
# cores — which the run's `max_concurrency` does not resize, so the 7th parallel step waited for a
# free thread (bench/graph_parallel.py). Steps get a pool of their own instead.
_STEP_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="plangraph-step")


def threaded(node: Callable[..., Any]) -> Runnable:
    """`node` as a LangGraph runnable whose async path runs it on the step pool (context kept)."""

    async def run_async(*args: Any, **kwargs: Any) -> Any:
        call = functools.partial(contextvars.copy_context().run, node, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_STEP_POOL, call)

    return RunnableCallable(node, run_async, name=node.__name__)


def make_agent_node(spec: AgentSpec, services: ServicesFactory):  # noqa: ANN201 - a LangGraph node
    """A node that runs `spec` on the step named by the executor's Send payload."""
    loop = AGENT_LOOP if spec.agentic else None  # named here so LangGraph finds (and draws) the subgraph

    def run_step(payload: StepInput, runtime: Runtime[Context]) -> dict[str, Any]:
        svc = services(resolve_context(runtime.context))
        ctx = svc.ctx
        plan, seq = payload["plan"], payload["seqNo"]
        step = next(s for s in plan["steps"] if s["seqNo"] == seq)
        writer = runtime.stream_writer
        previous = step.get("result")
        if previous is not None and previous["status"] == "interrupted":
            # The answered step starts again: only now, with the answer checkpointed (the run streams
            # with durability="sync"), the plan stops being listed as waiting. Saved earlier (in
            # ask_user), a failed checkpoint write left the store saying "running" while the thread
            # still waited, and the plan vanished from pending / GET /pending / remind.
            svc.plans.save(
                {
                    **plan,
                    "steps": [{**s, "status": "in_progress"} if s is step else s for s in plan["steps"]],
                },
                user_id=ctx.user_id,
                conversation_id=ctx.conversation_id,
                status="running",
            )
        by_seq = {s["seqNo"]: s for s in plan["steps"]}
        deps = {d: by_seq[d]["result"] for d in step["dependsOn"] if by_seq[d]["result"] is not None}
        results = svc.results(spec.name)
        step_ctx = StepContext(
            plan_id=plan["planId"],
            seq_no=seq,
            agent_name=spec.name,
            requirement=step["requirement"] or plan["userQuery"],
            user_query=plan["userQuery"],
            plan_context=plan["context"],
            deps=deps,  # type: ignore[arg-type]
            user_id=ctx.user_id,
            conversation_id=ctx.conversation_id,
            data_dir=ctx.data_path,
            memory=svc.agent_memory(spec.name),
            emit=lambda text: writer(StreamChunk(index=seq, content=text)),
            model=svc.model,
            results=results,
            knowledge=svc.knowledge,
            settings=ctx,
            ep=start_ep(spec, plan["planId"], seq, step["result"], plan["context"], results.load),
            window=lambda prompt, request, budget: svc.agent_window(
                spec.name, prompt, request, todo_id_of(plan["planId"], seq), budget
            ),
            previous=previous,
            tools=lambda todo_id: svc.agent_tools(spec.name, todo_id),
            earlier=lambda: svc.todo_tool(
                {
                    todo_id_of(plan["planId"], s["seqNo"]): s["agentName"]
                    for s in plan["steps"]
                    if s["seqNo"] < seq
                }
            ),
            facts=svc.memory.facts.for_user(ctx.user_id),
            offload=lambda text: svc.memory.offload(text, svc.namespace(spec.name)),
        )
        log.info(
            "step %s (%s) starting; plan %s%s",
            seq,
            spec.name,
            plan["planId"],
            f" ({loop.name} in model mode)" if loop is not None and svc.model is not None else "",
        )
        try:
            result = spec.run(step_ctx)
        except Exception as exc:
            if is_service_fault(exc):
                # The model, a database, the disk or the vector store failed, not the agent: the
                # node's RetryPolicy retries what is transient, and the turn ends with the step still
                # to run (state stays at the last checkpoint), so `resume` finishes it once the
                # service is back. Marked failed, the step would stay failed for good.
                log.warning("step %s (%s) stopped by a service fault: %r", seq, spec.name, exc)
                raise
            # An agent bug: logged with its traceback and reported as a failed step.
            log.exception("step %s (%s) raised", seq, spec.name)
            result = _failed(plan["planId"], seq, exc, step_ctx.failed_plan())
        log.info("step %s (%s) finished: %s", seq, spec.name, result["status"])
        kept = by_reference(result, results, plan["planId"], seq)
        intent = f"{spec.name}_{_INTENT[result['status']]}"
        card = AgentChatResponse(content=result["output"], intent=intent, data=kept["context"])
        writer(StreamChunk(index=seq, content=result["output"], agentChatResponse=card))
        return {
            "plan": {
                "planId": plan["planId"],
                "steps": [{"seqNo": seq, "status": result["status"], "result": kept}],
            }
        }

    run_step.__name__ = f"run_{spec.name}"
    return run_step


_INTENT = {"completed": "result", "interrupted": "question", "failed": "failed"}
BRIEF_CHARS = 160  # longest step output kept in graph state; the whole text is a result by reference


def by_reference(result: AgentExecResult, results: Results, plan_id: str, seq: int) -> AgentExecResult:
    """The result as the plan keeps it: big parts stored once, referenced by `store://` id.

    The step's internal plan (DOT) goes to the results store (`context["ep"]` becomes its id); an
    output longer than `BRIEF_CHARS` is stored whole (`context["detail"]`) and the plan keeps its
    first lines. The stream carries the whole output; graph state, plan DOT and checkpoints stay
    small however long the agents write (bench/s1_state_size.py).
    """
    context = dict(result["context"])
    if isinstance(context.get("ep"), str) and not context["ep"].startswith("store://"):
        context["ep"] = results.put("ep", plan_id, seq, {"dot": context["ep"]}, {})
    output = result["output"]
    if result["status"] == "completed" and len(output) > BRIEF_CHARS:
        context["detail"] = results.put("output", plan_id, seq, {"text": output}, {})
        output = f"{brief(output, BRIEF_CHARS)}\n…"
    return AgentExecResult(
        recordId=result["recordId"], output=output, status=result["status"], context=context
    )


def brief(text: str, limit: int) -> str:
    """The leading whole lines of `text` within `limit` characters (the first line cut if it alone is longer)."""
    kept: list[str] = []
    for line in text.splitlines():
        if kept and sum(len(k) + 1 for k in kept) + len(line) > limit:
            break
        kept.append(line[:limit] if not kept else line)
    return "\n".join(kept)


def _failed(plan_id: str, seq: int, exc: Exception, ep: str | None) -> AgentExecResult:
    return AgentExecResult(
        recordId=f"{plan_id}:{seq}:error",
        output=f"步骤执行出错（{type(exc).__name__}: {exc}）。",
        status="failed",
        context={"error": type(exc).__name__, **({"ep": ep} if ep else {})},
    )
