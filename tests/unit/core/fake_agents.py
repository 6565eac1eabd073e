"""Small scripted sub-agents for testing the framework without the PV domain."""

from __future__ import annotations

import threading
from collections import Counter
from types import SimpleNamespace

from nodes.kit.registry import AgentSpec, InputField
from nodes.kit.step import StepContext

RUNS: Counter[str] = Counter()
BARRIER: dict[str, threading.Barrier] = {}


def _ask_city(ctx: StepContext):
    RUNS["ask_city"] += 1
    city = ctx.plan_context.get("city")
    if not city:
        return ctx.interrupted("请告诉我项目所在的城市。", ["city"])
    ctx.emit(f"正在查询{city}…")
    ctx.record_tool_call("lookup", {"city": city}, f"{city}: ok", {"city": city})
    ctx.save_result("lookup", {"city": city}, {"city": city})
    return ctx.result("completed", f"城市：{city}", {"city": city})


def _use_dep(ctx: StepContext):
    RUNS["use_dep"] += 1
    got = {seq: res["context"] for seq, res in ctx.deps.items()}
    return ctx.result("completed", f"收到依赖：{got}", {"got": got})


def _meet(ctx: StepContext):
    RUNS["meet"] += 1
    BARRIER["meet"].wait()  # all parallel steps must be running at once to pass
    return ctx.result("completed", "met", {})


def _boom(ctx: StepContext):
    RUNS["boom"] += 1
    raise RuntimeError("kaput")


def _city_answer(text: str) -> dict:
    return {"city": text.removeprefix("城市是").strip()} if text.startswith("城市是") else {}


SPECS = {
    s.name: s
    for s in [
        AgentSpec(
            "ask_city",
            "查询城市信息 city lookup",
            _ask_city,
            examples=("查询城市",),
            inputs=(InputField("city", "请告诉我城市。"),),
            parse_answer=_city_answer,
            produces=("lookup",),
        ),
        AgentSpec(
            "use_dep", "汇总依赖 summarise dependencies", _use_dep, examples=("汇总",), consumes=("lookup",)
        ),
        AgentSpec("meet", "并行会合 parallel meeting", _meet, examples=("会合",)),
        AgentSpec("boom", "总是出错 always fails", _boom, examples=("出错",)),
    ]
}


def template(name: str, description: str, steps: list[tuple[str, list[int]]]) -> SimpleNamespace:
    """A workflow template object shaped like tools.plans.workflows.WorkflowTemplate."""
    return SimpleNamespace(
        name=name,
        description=description,
        examples=(description.split()[0],),  # the Chinese phrase, as a user would type it
        steps=[
            {"seqNo": i, "agentName": a, "requirement": "", "dependsOn": d} for i, (a, d) in enumerate(steps)
        ],
    )


TEMPLATES = [
    template("城市汇总", "查询城市然后汇总 city then summarise", [("ask_city", []), ("use_dep", [0])]),
    template(
        "三方会合",
        "三个并行会合 three parallel meetings",
        [("meet", []), ("meet", []), ("meet", []), ("use_dep", [0, 1, 2])],
    ),
    template(
        "出错流程", "先出错再汇总 fail then summarise", [("boom", []), ("use_dep", [0]), ("use_dep", [1])]
    ),
]
