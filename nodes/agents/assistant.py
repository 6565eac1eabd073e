"""assistant — the general assistant for requests outside the PV flows (agentic with a model).

With a model (`Context.model`) it runs the tool loop (docs/agents.md) with every tool a model may
use here: the knowledge base with citations, the PV tools (calculate, sensitivity, reverse), the
conversation's memory (`search_block` / `list_blocks` / `load`) and results (`find_results`), and
`ask_user`. Offline it answers honestly that the request is outside what the agents do and lists
what they do — the planner's out-of-scope reply. The offline planner never routes to it
(`AgentSpec.offline=False`); with a model, the planner picks it from `list_agents`.
"""

from __future__ import annotations

from nodes.agents._pv import note_standing, standing_values
from nodes.kit.agentic import final_text
from nodes.kit.agentic_step import run_agentic
from nodes.kit.registry import AgentSpec
from nodes.kit.step import StepContext
from nodes.understand import out_of_scope
from tools.contracts import AgentExecResult
from tools.kb.tool import Sources, make_knowledge_tool
from tools.pv.tools import CaseStore, make_pv_tools

__all__ = ["AGENT", "AGENT_PROMPT", "run"]

AGENT_PROMPT = """你是光伏投资方面的通用助手，处理其他专职智能体不覆盖的请求。用工具完成任务，不要编造数据：
- knowledge_search：政策、并网、运维知识，回答时用资料编号注明来源 [n]；
- pv_calculate / pv_sensitivity / pv_reverse：光伏经济性测算、敏感性分析、逆向寻优；
- search_block / list_blocks / load / find_results：本对话更早的内容和结果（store:// 数据用 load 读取）；
- ask_user：只有用户才知道的信息才问，同一个问题不要问两次。
工具报错时按错误提示改正参数再调用。超出这些能力的请求，如实说明做不到，并说明你能做什么。用用户的语言简洁回答。"""


def run(ctx: StepContext) -> AgentExecResult:
    """Do what the request asks with the tools (model mode), or say honestly what is possible (offline)."""
    if ctx.model is None:
        return _offline(ctx)
    tools = make_pv_tools(
        CaseStore(
            save=ctx.save_result,
            latest=lambda kind: (
                None if (found := ctx.latest_result(kind)) is None else (found[0].ref, found[1])
            ),
            load=ctx.load_result,
            tables=ctx.settings.pv_data or None,
            standing=lambda: standing_values(ctx, ctx.language),
            used=lambda defaults: note_standing(ctx, defaults),
        )
    )
    if ctx.knowledge is not None:
        tools = [make_knowledge_tool(ctx.knowledge(), Sources()), *tools]
    return run_agentic(ctx, AGENT_PROMPT, tools, lambda state: _answer(ctx, final_text(state)), _offline)


def _answer(ctx: StepContext, text: str) -> AgentExecResult | None:
    return ctx.result("completed", text, {}) if text else None


def _offline(ctx: StepContext) -> AgentExecResult:
    """The out-of-scope reply over the agents that route offline (this one excluded)."""
    from nodes.agents import agents

    specs = {name: spec for name, spec in agents().items() if spec.offline}
    return ctx.result("completed", out_of_scope(specs, ctx.language), {"out_of_scope": True})


AGENT = AgentSpec(
    name="assistant",
    description=(
        "通用助手 general assistant：处理其他智能体不覆盖的请求，可检索知识库、调用光伏测算/敏感性/逆向寻优工具、"
        "查询本对话的历史与结果，必要时向用户提问。General requests outside the PV flows, using every tool."
    ),
    run=run,
    offline=False,
    agentic=True,
)
