"""One agentic step: run `nodes.kit.agentic.AGENT_LOOP` for a sub-agent and turn its stop into a result.

An agentic agent's `run(ctx)` calls `run_agentic(ctx, ...)` when `ctx.model` is set and runs its
deterministic workflow otherwise. The step's outcome:

- answered → the agent's `finish(state)` builds the result (or returns None: the offline path);
- asking → an interrupted result; its context holds the loop by `store://` id (`loop`), so the
  re-run after the user's answer continues the same loop (`resume_messages`);
- exhausted (a bound, or a model error that is not transient) → the agent's offline path, with
  the reason streamed and kept in the result's `context["agentic"]`.

The loop's head is the step's window scoped to its `todo_id` (its own blocks only; the agent's
other sub-tasks named by id) within `HEAD_SHARE` of the token budget; every turn's prompt stays
within the budget (`nodes.kit.agentic_prompt`). The loop's complete tool-call closures are
written to the agent's memory under the step's `todo_id`, so a later step finds them with
`search_block(todo_id=…)` or `search_todo`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from langchain_core.tools import BaseTool

from nodes.kit.agentic import LoopRun, LoopState, closures, resume_messages, run_loop, saved_loop
from nodes.kit.agentic_prompt import HEAD_SHARE
from nodes.kit.step import StepContext
from tools.contracts import AgentExecResult
from tools.lang import pick
from tools.results import make_results_tool

__all__ = ["LOOP_KIND", "run_agentic", "step_tools"]

log = logging.getLogger("plangraph.agentic")

LOOP_KIND = "agent_loop"  # results-index kind of a loop waiting for the user's answer


def step_tools(ctx: StepContext) -> list[BaseTool]:
    """The tools every agentic step has besides its own.

    Its memory tools (scoped to its todo), `search_todo` over the plan's earlier steps (when there
    are any) and the results index (`find_results`).
    """
    memory = ctx.tools(ctx.todo_id) if ctx.tools is not None else []
    earlier = ctx.earlier() if ctx.earlier is not None else None
    recent = getattr(ctx.results, "recent", None)
    return [
        *memory,
        *([earlier] if earlier is not None else []),
        *([make_results_tool(recent)] if recent is not None else []),
    ]


def run_agentic(
    ctx: StepContext,
    system_prompt: str,
    tools: Sequence[BaseTool],
    finish: Callable[[LoopState], AgentExecResult | None],
    offline: Callable[[StepContext], AgentExecResult],
) -> AgentExecResult:
    """Run this step's tool loop (resuming it after an answer) and return the step's result."""
    assert ctx.model is not None, "run_agentic needs a model (Context.model)"
    start = _resumed(ctx)
    run = LoopRun(
        model=ctx.model,
        tools=[*tools, *step_tools(ctx)],
        head=ctx.prompt(system_prompt, ctx.requirement, int(ctx.settings.token_budget * HEAD_SHARE)),
        max_turns=ctx.settings.agent_max_turns,
        max_tokens=ctx.settings.agent_step_tokens,
        emit=ctx.emit,
        language=ctx.language,
        budget=ctx.settings.token_budget,
        offload=ctx.offload,
    )
    state = run_loop(run, start)
    stats = {"turns": state["turns"], "tokens": state["tokens"], "stop": state["stop"]}
    log.info("step %s (%s): tool loop stopped: %s %s", ctx.seq_no, ctx.agent_name, stats, state["reason"])
    if state["stop"] == "asking":
        ref = ctx.save_result(LOOP_KIND, saved_loop(state), {"question": state["question"]})
        return ctx.interrupted(state["question"], ["answer"], loop=ref, agentic=stats)
    done = closures(state)
    if done:
        for message in done:
            message.additional_kwargs["todo_id"] = ctx.todo_id
        ctx.memory.add(done)
    result = finish(state) if state["stop"] == "answered" else None
    if result is None:
        reason = state["reason"] or "the model's answer could not be used"
        stats["reason"] = reason
        ctx.emit(
            pick(
                ctx.language,
                f"模型没有完成这一步（{reason}），改用离线流程回答。",
                f"The model did not finish this step ({reason}); answering on the offline path.",
            )
        )
        result = offline(ctx)
    result["context"].update(agentic=stats, todo_id=ctx.todo_id)
    return result


def _resumed(ctx: StepContext) -> LoopState | None:
    """The loop this step stopped to ask about, with the user's answer appended; None for a fresh loop."""
    previous = ctx.previous
    ref = (previous or {}).get("context", {}).get("loop") if previous else None
    answer = ctx.answer()
    if previous is None or previous["status"] != "interrupted" or not isinstance(ref, str) or not answer:
        return None
    return resume_messages(ctx.load_result(ref), answer)
