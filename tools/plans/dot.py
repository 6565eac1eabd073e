"""Plans as Graphviz DOT (seeds/003): the agent-level plan (AEP) and an agent's internal plan (EP).

Both levels use the seed's node attributes `label shape type status toolCode toolInput toolOutput
question answer`; an edge `a -> b` means "b depends on a"; `status` holds the Chinese labels of
`tools.plans.status` (待初始化 when absent).

AEP — an ExecutionPlan, nodes of type `agent`, graph attributes `planId userQuery context`:

    digraph G {
      planId="plan_1"; userQuery="帮我测算杭州的光伏项目"; context="{}";
      0 [label="完成光伏经济测算" shape=box type="agent" seqNo=0 agentName="pv_calc" status="待运行"
         toolOutput="" question="" answer=""];
      1 [label="生成报告" shape=box type="agent" seqNo=1 agentName="report" status="待初始化" ...];
      0 -> 1;
    }

The node id is the step's seqNo, `label` its requirement, `toolOutput` its result as JSON ("" for
none), `context` the plan context as JSON. A plan the model revised (tools/plans/revise.py) also
has the graph attribute `epupdatelog`: its revision log, one line per review (`update_log`). `question` (an interrupted step's question) and `answer`
(the user's answers) are written for readers and not read back: the result and the context hold
them. `toolCode` is accepted in place of `agentName` (the seed's spelling).

EP — an `InternalPlan` of `function | multiFunction | confirm` nodes with any node ids; other node
attributes (e.g. `component`, `payload`) are kept in `InternalNode.extra`; graph attribute `epId`.

Parsing is all or nothing: any problem raises PlanFormatError naming the line or the node.
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from tools.contracts import AgentExecResult, ExecutionPlan, PlanStep, find_cycle
from tools.plans._dot_fast import RawDot, read_plain_dot
from tools.plans.status import STATUS_LABELS, StatusLabel, step_labels, step_status_of

__all__ = [
    "EP_FIELDS",
    "EP_NODE_TYPES",
    "InternalNode",
    "InternalPlan",
    "DotGraph",
    "NodeType",
    "PlanFormatError",
    "dot_to_internal_plan",
    "dot_to_plan",
    "internal_plan_to_dot",
    "parse_dot_graph",
    "plan_to_dot",
    "update_log",
]

NodeType = Literal["function", "multiFunction", "confirm"]
EP_NODE_TYPES: tuple[NodeType, ...] = ("function", "multiFunction", "confirm")
_SHAPES = {"agent": "box", "function": "record", "multiFunction": "record", "confirm": "ellipse"}
EP_FIELDS = {  # DOT attribute of an EP node -> InternalPlan node field
    "label": "label",
    "type": "type",
    "status": "status",
    "shape": "shape",
    "toolCode": "tool_code",
    "toolInput": "tool_input",
    "toolOutput": "tool_output",
    "question": "question",
    "answer": "answer",
}
_DIGITS = re.compile(r"[0-9]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = {"strict", "graph", "digraph", "subgraph", "node", "edge"}
_parse_lock = threading.Lock()  # pydot's pyparsing grammar is not thread-safe


class PlanFormatError(ValueError):
    """DOT text that is not a valid plan; the message names the line or node and the fix."""


@dataclass(frozen=True)
class InternalNode:
    """One EP node; `tool_code` of a multiFunction node lists tools separated by commas."""

    id: str
    label: str
    type: NodeType
    status: StatusLabel = "待初始化"
    tool_code: str = ""
    tool_input: str = ""
    tool_output: str = ""
    question: str = ""
    answer: str = ""
    shape: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.shape:
            object.__setattr__(self, "shape", _SHAPES.get(self.type, "box"))

    def tools(self) -> tuple[str, ...]:
        """The tool names this node calls (none for confirm nodes)."""
        return tuple(t.strip() for t in self.tool_code.split(",") if t.strip())


@dataclass(frozen=True)
class InternalPlan:
    """An agent's internal execution plan: nodes in order and `(before, after)` edges."""

    id: str
    nodes: tuple[InternalNode, ...]
    edges: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "edges", tuple(sorted(set(self.edges))))

    def node(self, node_id: str) -> InternalNode | None:
        """The node with this id, or None."""
        return next((n for n in self.nodes if n.id == node_id), None)

    def depends_on(self, node_id: str) -> tuple[str, ...]:
        """Ids of the nodes `node_id` waits for."""
        return tuple(a for a, b in self.edges if b == node_id)


# --- DOT text <-> plain graph -------------------------------------------------------------------


def quote(text: str) -> str:
    """A DOT double-quoted string that reads back (via `unquote`) as exactly `text`."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def unquote(raw: str) -> str:
    r"""The text of a DOT ID: quotes removed and the escapes \" \\ \n \r \l decoded."""
    if len(raw) < 2 or not (raw.startswith('"') and raw.endswith('"')):
        return raw
    out, body, i = [], raw[1:-1], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({'"': '"', "\\": "\\", "n": "\n", "r": "\r", "l": "\n"}.get(nxt, ch + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@dataclass
class DotGraph:
    """One parsed digraph, values unquoted: graph attributes, declared nodes in order, edges."""

    attrs: dict[str, str]
    nodes: dict[str, dict[str, str]]
    edges: list[tuple[str, str]]


def parse_dot_graph(text: str) -> DotGraph:
    """Parse one `digraph` into unquoted attributes, declared nodes and edges (all checked).

    Plain DOT (what plans and templates are written in) is read by `tools.plans._dot_fast`;
    anything else by pydot, which also words the syntax errors.
    """
    if not isinstance(text, str):
        raise PlanFormatError(f"expected DOT text (str), got {type(text).__name__}")
    raw = read_plain_dot(text)
    return _checked(raw if raw is not None else _pydot_read(text))


def _pydot_read(text: str) -> RawDot:
    """`text` parsed by pydot (imported on first use: its grammar costs 0.3 s of CPU to build)."""
    with warnings.catch_warnings():
        # pydot 4.0.1 builds its grammar at import with pyparsing 3.3 names it deprecates
        # (PyparsingDeprecationWarning, PyparsingDiagnosticWarning); upstream, harmless, import-time only.
        warnings.simplefilter("ignore")
        from pydot.dot_parser import GraphParser
    from pyparsing import ParseBaseException

    try:
        with _parse_lock:
            graphs = list(GraphParser.parser.parse_string(text, parse_all=True))
    except ParseBaseException as err:
        raise PlanFormatError(
            f"line {err.lineno}, column {err.column}: invalid DOT ({err.msg}) near {err.line.strip()[:80]!r}"
        ) from None
    except RecursionError:
        raise PlanFormatError("invalid DOT: braces nested too deeply; write one flat digraph") from None
    if len(graphs) != 1:
        raise PlanFormatError(
            f"expected exactly one digraph, found {len(graphs)}; keep one `digraph G {{…}}`"
        )
    g = graphs[0]
    return RawDot(
        graph_type=g.get_type(),
        has_subgraphs=bool(g.get_subgraphs()),
        attributes=dict(g.get_attributes()),
        nodes=[(node.get_name(), dict(node.get_attributes())) for node in g.get_nodes()],
        edges=[(edge.get_source(), edge.get_destination()) for edge in g.get_edges()],
    )


def _checked(g: RawDot) -> DotGraph:
    """The graph's values unquoted, with every rule of a plan graph checked."""
    if g.graph_type != "digraph":
        raise PlanFormatError("the plan is an undirected `graph`; write `digraph G {…}` with `->` edges")
    if g.has_subgraphs:
        raise PlanFormatError("subgraphs ({…} or `subgraph`) are not supported; declare nodes and edges flat")
    attrs = {k: unquote(str(v)) for k, v in g.attributes.items() if v is not None}
    nodes: dict[str, dict[str, str]] = {}
    for raw, node_attrs in g.nodes:
        values = {k: unquote(str(v)) for k, v in node_attrs.items() if v is not None}
        if raw == "graph":
            attrs.update(values)
            continue
        if raw in ("node", "edge"):
            continue  # default styling statements
        if ":" in raw and not raw.startswith('"'):
            raise PlanFormatError(f"node {raw}: ports are not supported; use a plain node id")
        name = unquote(raw)
        if name in nodes:
            raise PlanFormatError(f"node {name}: declared twice; give every node its own id")
        nodes[name] = values
    edges: list[tuple[str, str]] = []
    for src, dst in g.edges:
        if not (isinstance(src, str) and isinstance(dst, str)):
            raise PlanFormatError("an edge points to a group {…}; write one `a -> b;` per dependency")
        pair = unquote(src), unquote(dst)
        missing = [n for n in pair if n not in nodes]
        if missing:
            raise PlanFormatError(
                f"edge {pair[0]} -> {pair[1]}: node {missing[0]} is not declared; "
                "declare it with its attributes, e.g. `3 [label=… type=…];`"
            )
        edges.append(pair)
    if not nodes:
        raise PlanFormatError("the digraph has no nodes; declare at least one step")
    return DotGraph(attrs, nodes, edges)


def _check_acyclic(nodes: Collection[str], edges: Collection[tuple[str, str]]) -> None:
    """Raise PlanFormatError naming a cycle, if the edges form one."""
    after: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        after[a].append(b)
    cycle = find_cycle(after)
    if cycle is not None:
        raise PlanFormatError(f"the edges form a cycle: {' -> '.join(cycle)}; remove one edge")


def _status(node_id: str, attrs: Mapping[str, str]) -> StatusLabel:
    status = attrs.get("status") or "待初始化"
    if status not in STATUS_LABELS:
        raise PlanFormatError(
            f"node {node_id}: unknown status {status!r}; use one of: {', '.join(STATUS_LABELS)}"
        )
    return cast(StatusLabel, status)


def _node_id(text: str) -> str:
    """A node id bare when DOT allows it (a number or a plain name), quoted otherwise."""
    plain = _DIGITS.fullmatch(text) or (_NAME.fullmatch(text) and text.lower() not in _KEYWORDS)
    return text if plain else quote(text)


def _dot(
    graph_attrs: list[tuple[str, str]],
    nodes: list[tuple[str, list[tuple[str, str]]]],
    edges: list[tuple[Any, Any]],
) -> str:
    lines = ["digraph G {"]
    lines += [f"  {key}={value};" for key, value in graph_attrs]
    lines += [f"  {nid} [{' '.join(f'{k}={v}' for k, v in attrs)}];" for nid, attrs in nodes]
    lines += [f"  {a} -> {b};" for a, b in edges]
    return "\n".join([*lines, "}"]) + "\n"


# --- AEP: ExecutionPlan ---------------------------------------------------------------------------


def _json(value: Any, where: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise PlanFormatError(f"{where}: cannot be written as JSON ({err}); keep plain JSON values") from None


def plan_to_dot(plan: ExecutionPlan) -> str:
    """The ExecutionPlan as DOT; `dot_to_plan` reads it back equal."""
    labels = step_labels(plan)
    answers = plan["context"].get("answers", {}) if isinstance(plan["context"], Mapping) else {}
    nodes = []
    for step in sorted(plan["steps"], key=lambda s: s["seqNo"]):
        seq, result = step["seqNo"], step["result"]
        question = result["output"] if result and result["status"] == "interrupted" else ""
        answer = "\n".join(str(a) for a in answers.get(str(seq), [])) if isinstance(answers, Mapping) else ""
        attrs = [
            ("label", quote(step["requirement"])),
            ("shape", _SHAPES["agent"]),
            ("type", quote("agent")),
            ("seqNo", str(seq)),
            ("agentName", quote(step["agentName"])),
            ("status", quote(labels[seq])),
            ("toolOutput", quote("" if result is None else _json(result, f"step {seq} result"))),
            ("question", quote(question)),
            ("answer", quote(answer)),
        ]
        nodes.append((str(seq), attrs))
    graph_attrs = [
        ("planId", quote(plan["planId"])),
        ("userQuery", quote(plan["userQuery"])),
        ("context", quote(_json(plan["context"], "plan context"))),
    ]
    log = plan["context"].get("revisions") if isinstance(plan["context"], Mapping) else None
    if log:
        graph_attrs.append(("epupdatelog", quote(update_log(log))))
    edges = [(d, s["seqNo"]) for s in sorted(plan["steps"], key=lambda s: s["seqNo"]) for d in s["dependsOn"]]
    return _dot(graph_attrs, nodes, edges)


_OUTCOMES = {"applied": "已调整", "unchanged": "无需调整", "rejected": "未采用"}
_CHANGES = (("added", "新增"), ("dropped", "删除"), ("rewired", "调整顺序"), ("rewritten", "改写"))


def update_log(entries: list[Mapping[str, Any]]) -> str:
    """The plan's revision log (`context["revisions"]`) as the `epupdatelog` text, one line per review.

    Written for readers (seeds/003's @epupdatelog@, one markdown list); `dot_to_plan` does not
    read it back: the plan's `context` holds the entries.
    """
    lines = []
    for n, entry in enumerate(entries, 1):
        after = "、".join(str(s) for s in entry.get("after", []))
        changes = "，".join(
            f"{word} {'、'.join(map(str, entry[key]))}" for key, word in _CHANGES if entry.get(key)
        )
        note = " ".join(str(entry.get("note", "")).split())
        outcome = _OUTCOMES.get(str(entry.get("status")), str(entry.get("status")))
        lines.append(f"{n}. 步骤 {after} 完成后（{outcome}{'：' + changes if changes else ''}）：{note}")
    return "\n".join(lines)


def _result(node_id: str, text: str) -> AgentExecResult | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise PlanFormatError(
            f'node {node_id}: toolOutput is not JSON ({err.msg}); write "" for no result'
        ) from None
    expected = {"recordId": str, "output": str, "status": str, "context": dict}
    if not isinstance(value, dict) or any(not isinstance(value.get(k), t) for k, t in expected.items()):
        raise PlanFormatError(
            f"node {node_id}: toolOutput must be a JSON AgentExecResult with recordId, output, status, context"
        )
    if value["status"] not in ("completed", "interrupted", "failed"):
        raise PlanFormatError(
            f"node {node_id}: result status {value['status']!r} must be completed|interrupted|failed"
        )
    return cast(AgentExecResult, value)


def _aep_step(node_id: str, attrs: Mapping[str, str], agents: Collection[str] | None) -> PlanStep:
    if not _DIGITS.fullmatch(node_id):
        raise PlanFormatError(f"node {node_id}: agent-plan node ids are step numbers (0, 1, 2 …)")
    seq = int(node_id)
    seq_attr = attrs.get("seqNo", node_id).strip()
    if not _DIGITS.fullmatch(seq_attr) or int(seq_attr) != seq:
        raise PlanFormatError(
            f"node {node_id}: seqNo={attrs['seqNo']} differs from the node id; make them equal"
        )
    node_type = attrs.get("type", "")
    if node_type != "agent":
        raise PlanFormatError(
            f'node {node_id}: unknown node type {node_type!r} in an agent-level plan; use type="agent"'
        )
    name, code = attrs.get("agentName", ""), attrs.get("toolCode", "")
    if name and code and name != code:
        raise PlanFormatError(f"node {node_id}: agentName {name!r} and toolCode {code!r} differ; keep one")
    name = name or code
    if not name:
        raise PlanFormatError(f'node {node_id}: missing agentName; add agentName="<agent>"')
    if agents is not None and name not in agents:
        raise PlanFormatError(
            f"node {node_id}: unknown agent {name!r}; available: {', '.join(sorted(agents))}"
        )
    return PlanStep(
        seqNo=seq,
        agentName=name,
        requirement=attrs.get("label", ""),
        status=step_status_of(_status(node_id, attrs)),
        dependsOn=[],
        result=_result(node_id, attrs.get("toolOutput", "")),
    )


def dot_to_plan(text: str, agents: Collection[str] | None = None) -> ExecutionPlan:
    """Parse DOT into a validated ExecutionPlan; `agents` (when given) are the valid agent names."""
    graph = parse_dot_graph(text)
    parsed = [_aep_step(nid, attrs, agents) for nid, attrs in graph.nodes.items()]
    steps = {step["seqNo"]: step for step in parsed}
    if len(steps) != len(graph.nodes):
        raise PlanFormatError("two nodes have the same step number (e.g. 1 and 01); renumber them")
    _check_acyclic(list(graph.nodes), graph.edges)
    for a, b in graph.edges:
        steps[int(b)]["dependsOn"].append(int(a))
    for step in steps.values():
        step["dependsOn"] = sorted(set(step["dependsOn"]))
    try:
        context = json.loads(graph.attrs.get("context") or "{}")
    except json.JSONDecodeError as err:
        raise PlanFormatError(
            f'graph attribute context is not JSON ({err.msg}); write context="{{}}"'
        ) from None
    if not isinstance(context, dict):
        raise PlanFormatError('graph attribute context must be a JSON object, e.g. context="{}"')
    return ExecutionPlan(
        planId=graph.attrs.get("planId", ""),
        userQuery=graph.attrs.get("userQuery", ""),
        steps=[steps[k] for k in sorted(steps)],
        context=context,
    )


# --- EP: InternalPlan ---------------------------------------------------------------------------


def internal_plan_to_dot(plan: InternalPlan) -> str:
    """The internal plan as DOT in the seed's form; `dot_to_internal_plan` reads it back equal."""
    nodes = []
    for node in plan.nodes:
        wanted = ["label", "shape", "type", "status"]
        wanted += (
            ["toolCode", "toolInput", "toolOutput", "question"] if node.type != "confirm" else ["question"]
        )
        wanted += [
            k for k in ("toolCode", "toolInput", "toolOutput", "answer") if getattr(node, EP_FIELDS[k])
        ]
        attrs = [(k, quote(getattr(node, EP_FIELDS[k]))) for k in dict.fromkeys(wanted)]
        attrs += [(k, quote(v)) for k, v in sorted(node.extra.items())]
        nodes.append((_node_id(node.id), attrs))
    graph_attrs = [("epId", quote(plan.id))] if plan.id else []
    return _dot(graph_attrs, nodes, [(_node_id(a), _node_id(b)) for a, b in plan.edges])


def _ep_node(node_id: str, attrs: Mapping[str, str]) -> InternalNode:
    node_type = attrs.get("type", "")
    if node_type not in EP_NODE_TYPES:
        hint = " (agent nodes belong to the agent-level plan)" if node_type == "agent" else ""
        raise PlanFormatError(
            f"node {node_id}: unknown node type {node_type!r}{hint}; use one of: {', '.join(EP_NODE_TYPES)}"
        )
    status = _status(node_id, attrs)
    if (
        node_type != "confirm"
        and status in ("待运行", "运行中", "完成")
        and not attrs.get("toolCode", "").strip()
    ):
        raise PlanFormatError(f"node {node_id}: a {node_type} node in status {status} needs a toolCode")
    known = {k: v for k, v in attrs.items() if k in EP_FIELDS and k not in ("type", "status")}
    extra = {k: v for k, v in attrs.items() if k not in EP_FIELDS}
    return InternalNode(
        id=node_id,
        type=cast(NodeType, node_type),
        status=status,
        extra=extra,
        **{EP_FIELDS[k]: v for k, v in known.items()} | {"label": attrs.get("label", node_id)},
    )


def dot_to_internal_plan(text: str, plan_id: str | None = None) -> InternalPlan:
    """Parse DOT into a validated InternalPlan; `plan_id` overrides the graph's `epId`."""
    graph = parse_dot_graph(text)
    nodes = tuple(_ep_node(nid, attrs) for nid, attrs in graph.nodes.items())
    _check_acyclic(list(graph.nodes), graph.edges)
    return InternalPlan(
        id=plan_id if plan_id is not None else graph.attrs.get("epId", ""),
        nodes=nodes,
        edges=tuple(graph.edges),
    )
