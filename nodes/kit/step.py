"""What a sub-agent sees when it runs one plan step: inputs, dependencies, memory, streaming."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool

from graphs.context import Context
from memory.facts import Fact
from memory.types import memory_namespace
from tools.contracts import AgentExecResult
from tools.lang import detect_language, named_language, pick
from tools.results import InMemoryResults, Results, StoredResult

if TYPE_CHECKING:
    from nodes.kit.ep import EPTracker
    from tools.kb.index import KnowledgeIndex

__all__ = ["AgentMemory", "InMemoryAgentMemory", "StepContext", "memory_namespace", "todo_id_of"]

log = logging.getLogger("plangraph.executor")
REFLECTION_FACTS = (
    "用户需求：{query}\n本步骤任务：{requirement}\n刚执行完的工具：{tool}\n工具输出（节选）：\n{output}"
)


def todo_id_of(plan_id: str, seq_no: int) -> str:
    """The sub-task id of a plan step (`todo_<plan>_<seqNo>`; seed 002's `todo_id`)."""
    return f"todo_{plan_id.removeprefix('plan_')[:12]}_{seq_no}"


class AgentMemory(Protocol):
    """One agent's conversation memory (a namespace of the block memory)."""

    namespace: str

    def add(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages (chronological)."""
        ...

    def messages(self) -> list[BaseMessage]:
        """All messages of this namespace, oldest first."""
        ...


class InMemoryAgentMemory:
    """A list-backed AgentMemory for unit tests and throwaway runs."""

    def __init__(self, namespace: str = "test") -> None:
        self.namespace = namespace
        self._messages: list[BaseMessage] = []

    def add(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages."""
        self._messages.extend(messages)

    def messages(self) -> list[BaseMessage]:
        """All messages, oldest first."""
        return list(self._messages)


@dataclass
class StepContext:
    """Everything one step of one sub-agent may read or use.

    `plan_context` holds values the user supplied for this plan (answers merged by ask_user);
    `deps` the AgentExecResults of the steps this one depends on, by seqNo. `results` holds what
    earlier steps of the conversation produced (by reference; `save_result` / `latest_result`).
    `knowledge` opens the knowledge index (None: the step has none); `settings` is the run's
    Context. `ep` (when the agent
    has an internal plan) follows the step's tool calls and questions and is returned in the
    result's `context["ep"]` as DOT; with a `model` as well, the model may refresh it after each
    tool call (reflection mode, see `nodes.kit.ep`). `facts` are the user's long-term facts
    (`memory.facts`, written by `nodes.standing`); a fact the step applies is named in the
    result (`use_fact`), so nothing is used silently. `offload(text)` keeps a long text in the
    agent's offload store and returns its `store://` id (what its `load` tool reads).
    """

    plan_id: str
    seq_no: int
    agent_name: str
    requirement: str
    user_query: str
    plan_context: dict[str, Any]
    deps: dict[int, AgentExecResult]
    user_id: str
    conversation_id: str
    data_dir: Path
    memory: AgentMemory
    emit: Callable[[str], None] = field(default=lambda text: None)
    model: BaseChatModel | None = None
    results: Results = field(default_factory=InMemoryResults)
    knowledge: Callable[[], KnowledgeIndex] | None = None
    settings: Context = field(default_factory=lambda: Context(conversation_id="test"))
    ep: EPTracker | None = None
    window: Callable[[str, str, int | None], list[BaseMessage]] | None = None
    previous: AgentExecResult | None = None
    tools: Callable[[str | None], list[BaseTool]] | None = None
    earlier: Callable[[], BaseTool | None] | None = None
    facts: Sequence[Fact] = ()
    facts_used: list[tuple[Fact, bool]] = field(default_factory=list)
    offload: Callable[[str], str] | None = None

    @property
    def todo_id(self) -> str:
        """The step's sub-task id: its messages and blocks are scoped to it (`todo_id_of`)."""
        return todo_id_of(self.plan_id, self.seq_no)

    def answer(self) -> str:
        """The user's newest answer to this step's question ("" when none)."""
        answers = self.plan_context.get("answers", {}).get(str(self.seq_no), [])
        return str(answers[-1]) if answers else ""

    def prompt(self, system_prompt: str, request: str, budget: int | None = None) -> list[BaseMessage]:
        """Messages for one model call of this agent, ending with `request`.

        Its disclosed memory window scoped to this step's todo (one system message, the todo's
        latest block and loose messages, then `request`, within `budget` tokens, default the
        run's token budget), or just the system prompt and `request` when the step runs without
        block memory.
        """
        if self.window is None:
            return [SystemMessage(system_prompt), HumanMessage(request)]
        return self.window(system_prompt, request, budget)

    def fact(self, key: str) -> Fact | None:
        """The user's long-term fact under `key` that applies to this agent (its scope), or None."""
        return next(
            (f for f in self.facts if f.key == key and (not f.scope or self.agent_name in f.scope)), None
        )

    def use_fact(self, fact: Fact, say: bool = True) -> None:
        """Record that this step applied `fact`; with `say`, the result's output names it and its source."""
        if all(f.fact_id != fact.fact_id for f, _ in self.facts_used):
            self.facts_used.append((fact, say))

    @property
    def language(self) -> str:
        """The language to answer in ("zh" or "en").

        A language the request names ("用英文写报告") wins; else the user's long-term preference for
        this agent ("以后报告都用英文", fact `lang`), noted in the result; else the plan's (set by
        the planner); else the request's.
        """
        named = named_language(self._own_words())
        if named is not None:
            return named
        fact = self.fact("lang")
        if fact is not None and fact.value in ("zh", "en"):
            self.use_fact(fact)
            return str(fact.value)
        lang = self.plan_context.get("lang")
        return lang if lang in ("zh", "en") else detect_language(self.user_query)

    def _own_words(self) -> str:
        """The request without the words it stated as long-term facts (those apply as facts, by scope)."""
        text = self.user_query
        for fact in self.facts:
            for said in fact.said.split("，"):
                if said and said in text:
                    text = text.replace(said, " ")
        return text

    def texts(self) -> list[str]:
        """The user's words for this step, oldest first: request, step requirement, answers.

        A requirement the model wrote (plan context `requirements_by: model`) is not the user's
        words: values in it (a model-invented "上海 1000kW") must not reach a calculation, so it is
        left out; the user's request and answers still say everything the user said.
        """
        answers = [str(a) for a in self.plan_context.get("answers", {}).get(str(self.seq_no), [])]
        if self.plan_context.get("requirements_by") == "model":
            return [self.user_query, *answers]
        return [self.user_query, self.requirement, *answers]

    def save_result(self, kind: str, payload: dict[str, Any], headline: dict[str, Any]) -> str:
        """Store this step's payload once (offload store) and index it; returns its `store://` id."""
        return self.results.put(kind, self.plan_id, self.seq_no, payload, headline)

    def latest_result(
        self, kind: str, where: Callable[[StoredResult], bool] | None = None
    ) -> tuple[StoredResult, dict[str, Any]] | None:
        """The conversation's newest result of `kind` (matching `where`) and its payload, or None."""
        found = self.results.latest(kind, where)
        return None if found is None else (found, self.results.load(found.ref))

    def load_result(self, ref: str) -> dict[str, Any]:
        """The payload of a result by its `store://` id (e.g. from a dependency's context)."""
        return self.results.load(ref)

    def record_tool_call(self, tool_name: str, args: dict[str, Any], output: str, structured: dict) -> None:
        """Write one tool-call closure (AIMessage with the call + its ToolMessage) to memory."""
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        self.memory.add(
            [
                AIMessage(
                    content="",
                    tool_calls=[{"name": tool_name, "args": args, "id": call_id}],
                    additional_kwargs={"todo_id": self.todo_id},
                ),
                ToolMessage(
                    content=output,
                    tool_call_id=call_id,
                    name=tool_name,
                    additional_kwargs={
                        "structured": json.loads(json.dumps(structured, default=str)),
                        "todo_id": self.todo_id,
                    },
                ),
            ]
        )
        if self.ep is None:
            return
        self.ep.tool_recorded(tool_name, args, output)
        if self.model is not None:
            facts = REFLECTION_FACTS.format(
                query=self.user_query, requirement=self.requirement, tool=tool_name, output=output[:600]
            )
            note = self.ep.reflect(self.model, facts)
            if note is not None:
                self.emit(f"执行计划已更新：{note}")

    def result(self, status: str, output: str, context: dict[str, Any] | None = None) -> AgentExecResult:
        """Build this step's AgentExecResult and remember the exchange (requirement → output).

        When a refreshed internal plan left a node waiting for the user, a completed step asks
        that node's question instead (and re-runs once the user answers).
        """
        context = dict(context or {})
        if self.ep is not None:
            waiting = self.ep.waiting()
            if status == "completed" and waiting is not None:
                log.info(
                    "step %s (%s): the refreshed plan asks: %s",
                    self.seq_no,
                    self.agent_name,
                    waiting.question,
                )
                return self._asking(waiting.question, {"missing": []})
            if status == "completed":
                self.ep.finish()
            elif status == "failed":
                self.ep.fail()
            context["ep"] = self.ep.dot()
        if self.facts_used:
            context["facts_used"] = [
                {"fact_id": f.fact_id, "key": f.key, "conversation_id": f.conversation_id, "text": f.text}
                for f, _ in self.facts_used
            ]
            if status == "completed":
                output = "\n".join([output, *(self._fact_note(f) for f, say in self.facts_used if say)])
        todo = {"todo_id": self.todo_id}
        self.memory.add(
            [
                HumanMessage(content=self.requirement, additional_kwargs=todo),
                AIMessage(content=output, additional_kwargs=todo),
            ]
        )
        return AgentExecResult(
            recordId=f"{self.plan_id}:{self.seq_no}:{uuid.uuid4().hex[:8]}",
            output=output,
            status=status,  # type: ignore[typeddict-item]
            context=context,
        )

    def _fact_note(self, fact: Fact) -> str:
        lang = str(fact.value if fact.key == "lang" else self.plan_context.get("lang"))
        text = fact.text
        if fact.key == "lang":  # said in one language, noted in the one it asks for
            scope = ", ".join(fact.scope)
            text = pick(
                lang,
                f"{scope + ' 的输出' if scope else '所有回答'}使用中文",
                f"{scope + ' output' if scope else 'all answers'} in English",
            )
        return pick(
            lang,
            f"（按您的长期设置：{text}。来源：{fact.when} 会话 {fact.conversation_id} 中您说“{fact.said}”；"
            f"可用 plangraph memory forget {fact.fact_id} 删除。）",
            f"(Using your standing preference: {text}. From conversation {fact.conversation_id} on "
            f"{fact.when}, where you said “{fact.said}”; remove it with plangraph memory forget {fact.fact_id}.)",
        )

    def interrupted(self, question: str, missing: list[str], **context: Any) -> AgentExecResult:
        """Ask the user for `missing` inputs; the step re-runs once they answer."""
        if self.ep is not None:
            self.ep.ask(question)
        return self._asking(question, {"missing": missing, **context})

    def failed_plan(self) -> str | None:
        """The internal plan of a step that raised, as DOT (running nodes 失败), or None."""
        if self.ep is None:
            return None
        self.ep.fail()
        return self.ep.dot()

    def _asking(self, question: str, context: dict[str, Any]) -> AgentExecResult:
        if self.ep is not None:
            context = {**context, "ep": self.ep.dot()}
        return AgentExecResult(
            recordId=f"{self.plan_id}:{self.seq_no}:{uuid.uuid4().hex[:8]}",
            output=question,
            status="interrupted",
            context=context,
        )
