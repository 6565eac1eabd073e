"""Embedding API: run requests and answer questions on one conversation, with a checkpointer.

with PlanRunner.open(user_id="alice", conversation_id="c1") as runner:
outcome = runner.run("帮我生成一份光伏经济测算报告")
if outcome.interrupt:
outcome = runner.resume("地点是杭州余杭区，工商业，装机容量500kW")
print(outcome.summary, outcome.artifacts)

Async (`arun` / `aresume` need an async checkpointer; `aopen` brings AsyncSqliteSaver):

async with PlanRunner.aopen(user_id="alice", conversation_id="c1") as runner:
outcome = await runner.arun("帮我生成一份光伏经济测算报告")
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import sqlite3
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot

from graphs.context import Context
from graphs.main import build_graph
from graphs.services import ServiceHub, embeddings_for
from graphs.state import InputState, OutputState, State
from memory.embeddings import MiniLMEmbeddings
from memory.vectors import VectorStoreError
from nodes.planner import EMPTY_REQUEST, HUGE_REQUEST
from plangraph.checkpoint import open_checkpointer
from plangraph.errors import (
    ConfigurationError,
    ConversationBusyError,
    ConversationNotFoundError,
    ConversationStateError,
    ServiceUnavailableError,
    UserFacingError,
)
from plangraph.turn_lock import TurnLocks, check_data_dir, turn_locks_for
from tools.contracts import artifact_file, artifacts_of
from tools.faults import (
    ModelFaultError,
    ModelRejectedError,
    is_service_fault,
    storage_fault_kind,
    transient_errors,
)
from tools.plans.workflows import TemplateError

__all__ = [
    "CLI_ADVICE",
    "ConfigurationError",
    "HTTP_ADVICE",
    "Advice",
    "ConversationBusyError",
    "ConversationNotFoundError",
    "ConversationStateError",
    "PlanRunner",
    "RunOutcome",
    "ServiceUnavailableError",
    "UserFacingError",
    "check_id",
    "clean_text",
]


@dataclass
class RunOutcome:
    """Where a run stopped: waiting on a question (`interrupt`) or finished (`plan`, `summary`)."""

    interrupt: dict[str, Any] | None
    plan: dict[str, Any] | None
    summary: str = ""
    artifacts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Advice:
    """How a user carries on after an error, in the words of what they use (CLI or HTTP API)."""

    new_conversation: str
    finish_cut_off: str
    resume_later: str  # {conv}: the conversation id
    model_settings: str
    bad_template: str  # {error}: what is wrong, naming the file (HTTP callers are not shown server paths)


CLI_ADVICE = Advice(
    new_conversation="或用 plangraph run 开始新的会话",
    finish_cut_off="不带回答运行 plangraph resume 可继续被中断的执行",
    resume_later="运行 plangraph resume --conversation {conv} 继续",
    model_settings="请检查 OPENAI_API_KEY、OPENAI_BASE_URL 和 PLANGRAPH_MODEL",
    bad_template="工作流模板有误：{error}。请修正 PLANGRAPH_TEMPLATES_DIR 中的这个模板（或这个设置）",
)
HTTP_ADVICE = Advice(
    new_conversation="或不带会话 ID 发送新请求，开始新的会话",
    finish_cut_off='在同一会话上发送 {"resume": null} 可继续被中断的执行',
    resume_later='在会话 {conv} 上发送 {{"resume": null}} 继续',
    model_settings="请服务管理员检查模型服务的配置",
    bad_template="服务器的工作流模板有误：请服务管理员查看服务日志，修正 PLANGRAPH_TEMPLATES_DIR 中的模板",
)

log = logging.getLogger("plangraph.runner")
_TEMPLATES_OK: set[str] = set()  # template folders already read without a problem
OnChunk = Callable[[dict], None] | Callable[[dict], Awaitable[None]]
OWNER_KEY = "plangraph_user"
MAX_PARALLEL_STEPS = 16
_INT64 = range(-(2**63), 2**63)
# C0/C1 control characters except tab, line feed and carriage return: nothing a person means to send,
# and NUL breaks PostgreSQL's jsonb and Graphviz (a plan drawing of such a request was an HTTP 500).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_ID_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # ids: no line breaks or tabs either
MAX_ID_CHARS = 200


def clean_text(text: str, what: str) -> str:
    """`text` without control characters; UserFacingError when it is not valid Unicode.

    A lone surrogate is what Python makes of bytes that are not UTF-8 (a terminal or script in
    another encoding); such text cannot be stored, so it is refused before anything is written.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise UserFacingError(
            f"{what}含有无法识别的字符（第 {error.start + 1} 个字符不是有效的 UTF-8）：请把终端或脚本的编码设为 "
            "UTF-8 后重新输入。没有改动任何内容。"
        ) from None
    return _CONTROL.sub("", text)


def check_id(value: str, what: str) -> str:
    """`value` if it can name a user or conversation (printable, valid Unicode, at most 200 characters)."""
    clean_text(value, what)
    if _ID_CONTROL.search(value) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise UserFacingError(
            f"{what} {value[:40]!r}{'…' if len(value) > 40 else ''} 不可用：请用 1–{MAX_ID_CHARS} 个可见字符"
            "（字母、数字、汉字、- . _ 等），不含控制字符。没有改动任何内容。"
        )
    return value


def _checked_answer(answer: Any, question: dict[str, Any], limit: int) -> Any:
    """`answer` if ask_user can use it and the checkpointer can store it; else a UserFacingError.

    A structured answer's fields are checked against the ones the question takes (`question["fields"]`,
    JSON Schema properties): nothing is written and the question stays open when one does not fit.
    """
    from nodes.ask_user import InvalidResumeError, check_fields, parse_resume

    if isinstance(answer, str):
        answer = clean_text(answer, "回答")
    elif isinstance(answer, dict):
        answer = {k: clean_text(v, "回答的字段") if isinstance(v, str) else v for k, v in answer.items()}
    try:
        text, fields = parse_resume(answer)
    except InvalidResumeError as error:
        raise UserFacingError(
            f"无法使用这个回答（{error}）：请用文字回答问题，或给出 JSON 对象形式的输入字段。"
        ) from None
    schema = question.get("fields")
    if isinstance(schema, dict):  # absent in questions asked before fields were typed
        try:
            check_fields(fields, schema)
        except InvalidResumeError as error:
            raise UserFacingError(
                f"无法使用这个回答：{error}。没有改动任何内容，问题仍在等待：请改正后重新回答，或用文字回答。"
            ) from None
    if len(text) > limit:
        raise UserFacingError(
            f"回答过长（{len(text)} 字，最多 {limit} 字）：请只回答问题本身。没有改动任何内容，问题仍在等待。"
        )
    stack = [answer]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, str):
            clean_text(value, "回答")
        elif isinstance(value, int) and not isinstance(value, bool) and value not in _INT64:
            raise UserFacingError("回答中有超出范围的整数（须在 ±2⁶³ 以内）：请改正后重新回答。")
    return answer


class PlanRunner:
    """One conversation of one user on a compiled, checkpointed graph."""

    def __init__(
        self,
        graph: CompiledStateGraph[State, Context, InputState, OutputState],
        context: Context,
        thread_id: str | None = None,
        services: ServiceHub | None = None,
        advice: Advice = CLI_ADVICE,
        locks: TurnLocks | None = None,
    ) -> None:
        """`thread_id` defaults to the conversation id (the HTTP server namespaces it per user).

        `services` is the hub the graph was built with (to read results it stored by reference).
        `advice` words the "what to do next" of error messages (the HTTP server passes HTTP_ADVICE).
        `locks` keep one turn per conversation at a time; by default the ones that fit the graph's
        checkpointer (Postgres advisory locks, else file locks in the data dir).
        """
        self.graph = graph
        self.context = context
        self.services = services or ServiceHub()
        self.advice = advice
        self.locks = locks or turn_locks_for(graph.checkpointer, context.data_path)
        # The owner goes into every checkpoint's metadata: another user id on the same
        # conversation id is told the conversation does not exist (the CLI's thread id is the
        # conversation id alone; the HTTP server also namespaces thread ids per user).
        self.config: RunnableConfig = {
            "configurable": {"thread_id": thread_id or context.conversation_id},
            "metadata": {OWNER_KEY: context.user_id},
            # LangGraph's sync API would run at most min(32, cores + 4) steps at once (6 on 2 cores).
            "max_concurrency": MAX_PARALLEL_STEPS,
        }

    @classmethod
    @contextmanager
    def open(
        cls,
        *,
        user_id: str | None = None,
        conversation_id: str,
        data_dir: str | None = None,
        checkpoint_url: str | None = None,
    ) -> Iterator[PlanRunner]:
        """A runner on the default checkpointer (SQLite in the data dir, or PLANGRAPH_CHECKPOINT_URL)."""
        context = Context(conversation_id=check_id(conversation_id, "会话 ID"))
        if user_id:
            context.user_id = check_id(user_id, "用户 ID")
        if data_dir:
            context.data_dir = data_dir
        check_data_dir(context.data_path)
        with open_checkpointer(context.data_path, checkpoint_url) as saver:
            hub = ServiceHub()
            yield cls(build_graph(checkpointer=saver, services=hub), context, services=hub)

    @classmethod
    @asynccontextmanager
    async def aopen(
        cls, *, user_id: str | None = None, conversation_id: str, data_dir: str | None = None
    ) -> AsyncIterator[PlanRunner]:
        """A runner for `arun` / `aresume` on AsyncSqliteSaver in the data dir (the file `open` uses).

        For Postgres, compile `build_graph(checkpointer=<your AsyncPostgresSaver>)` and pass it to
        `PlanRunner(graph, Context(...))`.
        """
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        context = Context(conversation_id=check_id(conversation_id, "会话 ID"))
        if user_id:
            context.user_id = check_id(user_id, "用户 ID")
        if data_dir:
            context.data_dir = data_dir
        async with AsyncSqliteSaver.from_conn_string(str(context.data_path / "checkpoints.sqlite")) as saver:
            hub = ServiceHub()
            yield cls(build_graph(checkpointer=saver, services=hub), context, services=hub)

    def run(self, request: str, on_chunk: Callable[[dict], None] | None = None) -> RunOutcome:
        """Plan and run `request`; stops at the first question or at the end.

        Raises ConversationBusyError, changing nothing, while another turn of the conversation runs.
        """
        with self._turn():
            return self._stream(self.run_input(request), on_chunk)

    def resume(self, answer: Any = None, on_chunk: Callable[[dict], None] | None = None) -> RunOutcome:
        """Answer the waiting question (or, with no question waiting, finish a run that was cut off).

        Raises ConversationBusyError, changing nothing, while another turn of the conversation runs.
        """
        with self._turn():
            return self._stream(self.resume_input(answer), on_chunk)

    def _turn(self) -> AbstractContextManager[None]:
        """The conversation's turn lock: the state is read and written by one turn at a time."""
        thread_id = str(self.config["configurable"]["thread_id"])
        return self.locks.hold(thread_id, self.context.conversation_id)

    async def arun(self, request: str, on_chunk: OnChunk | None = None) -> RunOutcome:
        """Async twin of `run`; the graph needs an async checkpointer (AsyncSqliteSaver, AsyncPostgresSaver).

        `on_chunk` may be a plain function or a coroutine function.
        """
        with self._turn():
            state = await self.graph.aget_state(self.config)
            return await self._astream(self._run_input(state, request), on_chunk)

    async def aresume(self, answer: Any = None, on_chunk: OnChunk | None = None) -> RunOutcome:
        """Async twin of `resume`."""
        with self._turn():
            state = await self.graph.aget_state(self.config)
            return await self._astream(self._resume_input(state, answer), on_chunk)

    def warm_up(self) -> threading.Thread | None:
        """Start loading the local embedding model in a background thread, if it is not loaded yet.

        For the time a person reads a question and types the answer (the CLI calls this before it
        waits for input): the model is needed as soon as the first agent stores its result. Returns
        the thread, or None when there is nothing to load (hash or remote embeddings, already loaded).
        """
        embeddings = embeddings_for(self.context)
        if not isinstance(embeddings, MiniLMEmbeddings) or embeddings.loaded:
            return None
        thread = threading.Thread(
            target=_load_quietly, args=(embeddings,), name="plangraph-warm-up", daemon=True
        )
        thread.start()
        return thread

    def run_input(self, request: str) -> dict[str, Any]:
        """The graph input for `request`; raises UserFacingError when it is empty or too long."""
        return self._run_input(self.graph.get_state(self.config), request)

    def _run_input(self, state: StateSnapshot, request: str) -> dict[str, Any]:
        if not self._owns(state):
            raise UserFacingError(
                f"会话 ID {self.context.conversation_id} 已被其他用户使用：请换一个会话 ID 开始新的会话。"
            )
        text = clean_text(request or "", "请求").strip()
        if not text:
            raise UserFacingError(EMPTY_REQUEST)
        limit = self.context.max_request_chars
        if len(text) > limit:
            raise UserFacingError(HUGE_REQUEST.format(n=len(text), limit=limit))
        self._check_templates()
        return {"messages": [{"role": "user", "content": text}]}

    def _log_for_operator(self, error: Exception) -> None:
        """A server's operator reads the details in the log (the HTTP caller is not shown server paths)."""
        if self.advice is not CLI_ADVICE:
            log.error("workflow templates cannot be used: %s", error)

    def _check_templates(self) -> None:
        """ConfigurationError (nothing written yet) when a workflow template cannot be read as a plan.

        Checked once per process and template folders: DOT syntax, cycles, statuses. Agent names are
        the planner's to check (the graph may have agents of its own); a template naming an unknown
        one stops the run after the request is saved, with how to continue (`_service_errors`).
        """
        key = self.context.templates_dirs
        if key in _TEMPLATES_OK:
            return
        from tools.plans.workflows import load_templates

        try:
            load_templates(extra=key)
        except TemplateError as error:
            self._log_for_operator(error)
            raise ConfigurationError(
                f"{self.advice.bad_template.format(error=error)}，然后重试。没有改动任何内容。"
            ) from None
        _TEMPLATES_OK.add(key)

    def resume_input(self, answer: Any = None) -> Any:
        """The graph input that resumes the conversation; raises when `answer` does not fit its state."""
        return self._resume_input(self.graph.get_state(self.config), answer)

    def _resume_input(self, state: StateSnapshot, answer: Any) -> Any:
        conv = self.context.conversation_id
        if (not state.values and not state.next) or not self._owns(state):
            raise ConversationNotFoundError(
                f"找不到会话 {conv}：请检查会话 ID，{self.advice.new_conversation}。"
            )
        if state.interrupts:
            if answer is None or (isinstance(answer, str) and not clean_text(answer, "回答").strip()):
                empty = "" if answer is None else "收到的回答是空的。"
                raise ConversationStateError(
                    f"{empty}会话 {conv} 正在等待回答：{state.interrupts[0].value['question']}"
                )
            question = dict(state.interrupts[0].value)
            return Command(resume=_checked_answer(answer, question, self.context.max_request_chars))
        if state.next or state.tasks:  # tasks: a step finished but the run died before the next checkpoint
            if answer is not None:
                raise ConversationStateError(
                    f"会话 {conv} 没有等待回答的问题；{self.advice.finish_cut_off}。"
                )
            return None
        raise ConversationStateError(f"会话 {conv} 没有等待回答的问题，计划已经结束。")

    def snapshot(self) -> StateSnapshot | None:
        """The conversation's saved state (None when another user owns the conversation id)."""
        state = self.graph.get_state(self.config)
        return state if self._owns(state) else None

    def current_plan(self) -> dict[str, Any] | None:
        """The conversation's newest plan (None before the first request, or another user's)."""
        state = self.graph.get_state(self.config)
        return state.values.get("plan") if self._owns(state) else None

    def _owns(self, state: StateSnapshot) -> bool:
        """True unless the conversation's checkpoints name another user as its owner."""
        owner = (state.metadata or {}).get(OWNER_KEY)
        return owner is None or owner == self.context.user_id

    def render_plan(self, fmt: str, output: str | None = None, step: int | None = None) -> str:
        """The current plan (or step `step`'s internal plan) as JSON or DOT; svg/png go to `output`."""
        plan = self.current_plan()
        if plan is None:
            raise UserFacingError(f"会话 {self.context.conversation_id} 还没有计划。")
        if step is not None:
            return self._render_step_plan(plan, step, fmt, output)
        if fmt == "json":
            return _written(json.dumps(plan, ensure_ascii=False, indent=2, default=str) + "\n", output)
        from tools.plans.dot import plan_to_dot

        return self._render_dot(plan_to_dot(plan), fmt, output)  # type: ignore[arg-type]

    def _render_step_plan(self, plan: dict[str, Any], step: int, fmt: str, output: str | None) -> str:
        from nodes.agents import agents
        from nodes.kit.ep_plans import NoInternalPlanError, internal_plan_json, step_internal_plan
        from tools.plans.dot import internal_plan_to_dot

        try:
            load = self.services(self.context).results("planner").load
            ep = step_internal_plan(plan, step, agents(), load)  # type: ignore[arg-type]
        except NoInternalPlanError as error:
            raise UserFacingError(str(error)) from None
        if fmt == "json":
            return _written(json.dumps(internal_plan_json(ep), ensure_ascii=False, indent=2) + "\n", output)
        return self._render_dot(internal_plan_to_dot(ep), fmt, output)

    def _render_dot(self, dot: str, fmt: str, output: str | None) -> str:
        if fmt == "dot":
            return _written(dot if dot.endswith("\n") else dot + "\n", output)
        if not output:
            raise UserFacingError(f"--format {fmt} 需要用 --output 指定输出文件。")
        from tools.plans.render import GraphvizMissingError, render

        try:
            data = render(dot, "svg" if fmt == "svg" else "png")
        except GraphvizMissingError as error:
            raise UserFacingError(str(error), exit_code=1) from None
        return _written(data, output)

    def _resume_later(self) -> str:
        return self.advice.resume_later.format(conv=self.context.conversation_id)

    def _stream(self, graph_input: Any, on_chunk: Callable[[dict], None] | None) -> RunOutcome:
        with self._service_errors():
            # durability="sync": each step's checkpoint is saved before the next step starts, so a
            # killed process never re-runs a step whose result the user has already seen.
            for mode, chunk in self.graph.stream(
                graph_input,
                self.config,
                context=self.context,
                stream_mode=["custom", "updates"],
                durability="sync",
            ):
                if mode == "custom" and on_chunk is not None:
                    on_chunk(chunk)  # type: ignore[arg-type]
        return self._outcome(self.graph.get_state(self.config))

    async def _astream(self, graph_input: Any, on_chunk: OnChunk | None) -> RunOutcome:
        with self._service_errors():
            async for mode, chunk in self.graph.astream(
                graph_input,
                self.config,
                context=self.context,
                stream_mode=["custom", "updates"],
                durability="sync",
            ):
                if mode == "custom" and on_chunk is not None:
                    shown = on_chunk(chunk)  # type: ignore[arg-type]
                    if inspect.isawaitable(shown):
                        await shown
        return self._outcome(await self.graph.aget_state(self.config))

    @contextmanager
    def _service_errors(self) -> Iterator[None]:
        """Turn a failed service into a UserFacingError that says how to continue; state is kept."""
        try:
            yield
        except ModelRejectedError as error:  # a 4xx, quoted and named (tools.model.wire.describe_rejection)
            raise ServiceUnavailableError(
                f"{error}。进度已保存，修正后{self._resume_later()}。", exit_code=1
            ) from None
        except ModelFaultError as error:  # empty stream, garbage body, cut at the deadline
            raise ServiceUnavailableError(
                f"模型服务出错：{error}。进度已保存，服务恢复后{self._resume_later()}。", exit_code=1
            ) from None
        except VectorStoreError as error:
            raise UserFacingError(str(error), exit_code=1) from None
        except TemplateError as error:  # a template broke after the request was taken (e.g. on resume)
            self._log_for_operator(error)
            raise ConfigurationError(
                f"{self.advice.bad_template.format(error=error)}。请求已保存，修正后{self._resume_later()}。",
                exit_code=1,
            ) from None
        except Exception as error:
            if _is_openai(error, "APIStatusError"):
                if isinstance(error, transient_errors()):  # 5xx, 429: the service hiccuped
                    raise self._unavailable(error) from None
                raise UserFacingError(  # 4xx: retrying the same request cannot help
                    f"模型服务拒绝了请求（HTTP {getattr(error, 'status_code', '?')}）：{self.advice.model_settings}。"
                    f"进度已保存，修正后{self._resume_later()}。",
                    exit_code=1,
                ) from None
            if not is_service_fault(error):
                raise  # a bug is not disguised as an outage
            # The model endpoint, a database, the disk or the vector store failed: say which, keep state.
            raise self._unavailable(error) from None

    def _unavailable(self, error: Exception) -> ServiceUnavailableError:
        kind = storage_fault_kind(error)
        fix = "请腾出磁盘空间（数据目录所在的磁盘已满）后" if kind == "full" else "服务恢复后"
        where = ""
        if _is_openai(error, "APIConnectionError"):  # nothing answered: stopped, or a wrong address
            where = (
                f"：无法连接 {self.context.model_base_url or 'OPENAI_BASE_URL（未设置）'}，"
                "请确认模型服务已启动、OPENAI_BASE_URL 正确"
                if self.advice is CLI_ADVICE
                else f"：无法连接模型服务，{self.advice.model_settings}"
            )
        return ServiceUnavailableError(
            f"{_service_name(error)}暂时不可用（{type(error).__name__}: {str(error)[:120]}）{where}。进度已保存，"
            f"{fix}{self._resume_later()}。",
            exit_code=1,
        )

    def _outcome(self, state: StateSnapshot) -> RunOutcome:
        plan = state.values.get("plan")
        if state.interrupts:
            return RunOutcome(interrupt=dict(state.interrupts[0].value), plan=plan)
        return RunOutcome(
            interrupt=None,
            plan=plan,
            summary=state.values.get("summary", ""),
            # full local paths for the person on this machine (state names them relative to the data dir)
            artifacts=[str(artifact_file(self.context.data_path, p)) for p in artifacts_of(plan)]
            if plan
            else [],
        )


def _written(data: str | bytes, output: str | None) -> str:
    """`data` itself when there is no `output` file; else the file's name, once `data` is in it."""
    if not output:
        assert isinstance(data, str)
        return data
    try:
        with open(output, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    except OSError as error:
        raise UserFacingError(
            f"无法写入 {output}（{error.strerror}）：请检查文件夹是否存在、是否可写，或换一个 --output。"
        ) from None
    return f"{output}\n"


_SQLITE_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


def _service_name(error: Exception) -> str:
    """Which service `error` came from, as the user knows it."""
    if _is_openai(error, "OpenAIError"):
        return "模型服务"
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in _SQLITE_BUSY_CODES:
            return "检查点数据库（正被其他进程占用）"
        return "检查点数据库"
    psycopg = sys.modules.get("psycopg")  # imported only with a Postgres checkpointer
    if psycopg is not None and isinstance(error, psycopg.OperationalError):
        return "检查点数据库（PostgreSQL）"
    if isinstance(error, OSError) and storage_fault_kind(error) is not None:
        return "数据目录所在的磁盘"
    return "存储或检索服务"


def _is_openai(error: BaseException, name: str) -> bool:
    """True when `error` is an instance of `openai.<name>`.

    `openai` is imported only when a model is configured; before that no error of its can exist.
    """
    openai = sys.modules.get("openai")
    return openai is not None and isinstance(error, getattr(openai, name))


def _load_quietly(embeddings: MiniLMEmbeddings) -> None:
    """Load the model ahead of time; a failure is left to the turn that needs the model.

    That turn loads it again and reports what is wrong as a clear error; a background thread has
    no one to tell, so it only logs.
    """
    try:
        embeddings.load()
    except Exception as error:  # noqa: BLE001 - reported by the turn that needs the model
        logging.getLogger("plangraph.runner").info("warming up the embedding model failed: %s", error)
