"""Workflow templates: one Graphviz `.dot` file per workflow, instantiated by the offline planner.

A template is an agent-level plan (see `tools.plans.dot`) with three graph attributes::

    digraph G {
      name="光伏测算报告";                      // optional, defaults to the file name
      description="光伏项目经济性测算、敏感性分析并生成报告";   // required: the planner routes on it
      examples="帮我生成一份光伏经济测算报告|…";  // optional, example requests separated by |
      0 [label="光伏经济性测算" type="agent" agentName="pv_calc"];
      1 [label="生成测算报告文件" type="agent" agentName="report"];
      0 -> 1;
    }

Templates are read from the shipped `tools/plans/templates/` and then from each folder in
`PLANGRAPH_TEMPLATES_DIR` (separated by the OS path separator); a later template with the same
name replaces an earlier one, so users can override a shipped workflow by dropping in a file.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from typing_extensions import TypedDict

from tools.contracts import ExecutionPlan, PlanStep
from tools.plans.dot import PlanFormatError, dot_to_plan, parse_dot_graph

__all__ = [
    "SHIPPED_DIR",
    "TEMPLATES_ENV",
    "TemplateError",
    "TemplateStep",
    "WorkflowTemplate",
    "load_template",
    "load_templates",
    "template_dirs",
    "template_to_plan",
]

log = logging.getLogger("plangraph.workflows")

SHIPPED_DIR = Path(str(files("tools.plans") / "templates"))
TEMPLATES_ENV = "PLANGRAPH_TEMPLATES_DIR"


class TemplateError(ValueError):
    """A workflow template that cannot be used; the message names the file and the problem."""


class TemplateStep(TypedDict):
    """One step of a template (an ExecutionPlan step before it runs)."""

    seqNo: int
    agentName: str
    requirement: str
    dependsOn: list[int]


@dataclass(frozen=True)
class WorkflowTemplate:
    """A workflow: its name, what it is for, example requests, and its steps in seqNo order."""

    name: str
    description: str
    examples: tuple[str, ...]
    steps: tuple[TemplateStep, ...]
    path: Path


def template_dirs(extra: str = "") -> list[Path]:
    """The shipped folder, then every folder named in `extra` (Context.templates_dirs; each must exist)."""
    dirs = [SHIPPED_DIR]
    for entry in extra.split(os.pathsep):
        if entry.strip():
            folder = Path(entry.strip()).expanduser()
            if not folder.is_dir():
                raise TemplateError(
                    f"{TEMPLATES_ENV} names {folder}, which is not a folder; create it or fix the path"
                )
            dirs.append(folder)
    return dirs


def load_template(path: Path, agents: Collection[str] | None = None) -> WorkflowTemplate:
    """Read and validate one `.dot` template; `agents` (when given) are the valid agent names."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TemplateError(f"{path}: cannot read the template ({err}); save it as UTF-8 text") from None
    try:
        plan = dot_to_plan(text, agents=agents)
    except PlanFormatError as err:
        raise TemplateError(f"{path}: {err}") from None
    bad = [s["seqNo"] for s in plan["steps"] if s["status"] != "not_started" or s["result"] is not None]
    if bad:
        raise TemplateError(
            f"{path}: node {bad[0]} has a status or toolOutput; templates describe steps only"
        )
    attrs = parse_dot_graph(text).attrs
    description = attrs.get("description", "").strip()
    if not description:
        raise TemplateError(f'{path}: missing description; add description="这个工作流做什么" to the digraph')
    return WorkflowTemplate(
        name=attrs.get("name", "").strip() or path.stem,
        description=description,
        examples=tuple(e.strip() for e in attrs.get("examples", "").split("|") if e.strip()),
        steps=tuple(_step(s) for s in plan["steps"]),
        path=path,
    )


def _step(step: PlanStep) -> TemplateStep:
    return TemplateStep(
        seqNo=step["seqNo"],
        agentName=step["agentName"],
        requirement=step["requirement"],
        dependsOn=step["dependsOn"],
    )


def load_templates(
    dirs: Sequence[str | Path] | None = None, agents: Collection[str] | None = None, extra: str = ""
) -> list[WorkflowTemplate]:
    """Every `*.dot` template in `dirs` (default: `template_dirs(extra)`), validated, sorted by name.

    A bad file raises TemplateError naming it; nothing is loaded from a set with a bad file.
    """
    found: dict[str, WorkflowTemplate] = {}
    for folder in [Path(d) for d in dirs] if dirs is not None else template_dirs(extra):
        in_folder: dict[str, Path] = {}
        for path in sorted(folder.glob("*.dot")):
            template = load_template(path, agents)
            if template.name in in_folder:
                raise TemplateError(
                    f"{path}: workflow name {template.name!r} is also used by {in_folder[template.name]}; rename one"
                )
            in_folder[template.name] = path
            if template.name in found:
                log.info("workflow %r from %s replaces %s", template.name, path, found[template.name].path)
            found[template.name] = template
    return sorted(found.values(), key=lambda t: t.name)


def template_to_plan(template: WorkflowTemplate, user_query: str, plan_id: str) -> ExecutionPlan:
    """A fresh plan from a template: steps not_started, no results; an empty requirement takes the request."""
    steps = [
        PlanStep(
            seqNo=s["seqNo"],
            agentName=s["agentName"],
            requirement=s["requirement"] or user_query,
            status="not_started",
            dependsOn=list(s["dependsOn"]),
            result=None,
        )
        for s in template.steps
    ]
    return ExecutionPlan(planId=plan_id, userQuery=user_query, steps=steps, context={})
