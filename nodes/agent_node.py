"""Wraps a registered sub-agent as a graph node that runs exactly one plan step."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import openai
from langchain_core.runnables import Runnable
from langgraph._internal._runnable import RunnableCallable
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy

from graphs.context import Context, resolve_context
from graphs.state import StepInput
from nodes.ep import start_ep
from nodes.registry import AgentSpec
from nodes.services import agent_memory, agent_window, block_memory, chat_model
from nodes.step import StepContext
from tools.contracts import AgentExecResult

__all__ = ["STEP_RETRY", "TRANSIENT_ERRORS", "make_agent_node", "threaded"]

log = logging.getLogger("plangraph.executor")

# Errors worth another attempt: the model endpoint or network hiccuped. Anything else is a
# mistake (the agent's or the input's) and retrying would only repeat it.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    ConnectionError,
    TimeoutError,
    httpx.TransportError,
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
)
STEP_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.5, max_interval=5.0, retry_on=TRANSIENT_ERRORS)


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


def make_agent_node(spec: AgentSpec):  # noqa: ANN201 - a LangGraph node function
    """A node that runs `spec` on the step named by the executor's Send payload."""

    def run_step(payload: StepInput, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = resolve_context(runtime.context)
        plan, seq = payload["plan"], payload["seqNo"]
        step = next(s for s in plan["steps"] if s["seqNo"] == seq)
        writer = runtime.stream_writer
        by_seq = {s["seqNo"]: s for s in plan["steps"]}
        deps = {d: by_seq[d]["result"] for d in step["dependsOn"] if by_seq[d]["result"] is not None}
        memory = block_memory(ctx)
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
            memory=agent_memory(ctx, spec.name),
            emit=lambda text: writer({"index": seq, "content": text}),
            model=chat_model(ctx),
            memory_of=lambda name: agent_memory(ctx, name),
            offload=memory.offload,
            ep=start_ep(spec, plan["planId"], seq, step["result"], plan["context"]),
            window=lambda prompt, request: agent_window(ctx, spec.name, prompt, request),
        )
        log.info("step %s (%s) starting; plan %s", seq, spec.name, plan["planId"])
        try:
            result = spec.run(step_ctx)
        except TRANSIENT_ERRORS:
            raise  # the node's RetryPolicy retries; state stays at the last checkpoint
        except Exception as exc:  # an agent bug: logged with its traceback and reported as a failed step
            log.exception("step %s (%s) raised", seq, spec.name)
            result = _failed(plan["planId"], seq, exc, step_ctx.failed_plan())
        log.info("step %s (%s) finished: %s", seq, spec.name, result["status"])
        writer(
            {
                "index": seq,
                "content": result["output"],
                "agentChatResponse": {
                    "content": result["output"],
                    "intent": f"{spec.name}_{_INTENT[result['status']]}",
                    "data": result["context"],
                },
            }
        )
        return {
            "plan": {
                "planId": plan["planId"],
                "steps": [{"seqNo": seq, "status": result["status"], "result": result}],
            }
        }

    run_step.__name__ = f"run_{spec.name}"
    return run_step


_INTENT = {"completed": "result", "interrupted": "question", "failed": "failed"}


def _failed(plan_id: str, seq: int, exc: Exception, ep: str | None) -> AgentExecResult:
    return AgentExecResult(
        recordId=f"{plan_id}:{seq}:error",
        output=f"步骤执行出错（{type(exc).__name__}: {exc}）。",
        status="failed",
        context={"error": type(exc).__name__, **({"ep": ep} if ep else {})},
    )
