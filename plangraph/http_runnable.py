"""The Runnable that `langserve.add_routes` serves: one conversation turn per call.

LangServe alone breaks on interrupt graphs three ways (it drops `configurable.thread_id`,
filters `__interrupt__` out of the output, and treats a `Command` as new input). This
wrapper declares `thread_id` as a configurable field, returns the interrupt as
`__interrupt__`, and turns input `{"resume": answer}` into `Command(resume=answer)` through
PlanRunner, so the HTTP API behaves like the CLI.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import get_config_list
from langchain_core.runnables.utils import ConfigurableFieldSpec
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from graphs.context import Context
from graphs.services import ServiceHub
from graphs.state import InputState, OutputState, State
from plangraph.auth import thread_id_for
from plangraph.runner import HTTP_ADVICE, ConversationStateError, PlanRunner, RunOutcome, UserFacingError
from plangraph.turn_lock import TurnLocks
from plangraph.wire import public

__all__ = ["ConversationRunnable", "HttpInput", "HttpOutput", "Backend", "artifact_url"]


class HttpInput(TypedDict, total=False):
    """Either `messages` (a new request; the last message is the request) or `resume` (the answer).

    A message is a dict with `content` and `role` ("user") or `type` ("human"), as chat clients,
    Studio and LangServe's RemoteRunnable send them. Plain dicts (not `AnyMessage`) so that a
    malformed message is a 422 from validation, not an error inside LangChain's message parser.
    """

    messages: list[dict[str, Any]]
    resume: Any


HttpOutput = TypedDict(
    "HttpOutput",
    {
        "conversationId": str,
        "plan": dict[str, Any] | None,
        "summary": str,
        "artifacts": list[str],
        "__interrupt__": list[dict[str, Any]],
    },
    total=False,
)
HttpOutput.__doc__ = "A turn's result; `__interrupt__` is present while a question waits for `resume`."


def artifact_url(conversation_id: str, path: str) -> str:
    """Where the HTTP API serves an artifact file of the caller's conversation."""
    return f"/artifacts/{conversation_id}/{path.rsplit('/', 1)[-1]}"


@dataclass
class Backend:
    """The compiled, checkpointed graph, data dir and turn threads every request of a server shares.

    Turns run on their own pool, so quick requests (plans, pending, checks) never queue behind them.
    One turn per conversation at a time, across server processes too (`plangraph.turn_lock`): a
    second request while a turn runs is refused with 409 instead of waiting.
    """

    graph: CompiledStateGraph[State, Context, InputState, OutputState]
    data_dir: str
    pool: ThreadPoolExecutor
    services: ServiceHub = field(default_factory=ServiceHub)  # the hub the graph was built with
    locks: TurnLocks | None = None
    _shares: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    def runner(self, user_id: str, conversation_id: str) -> PlanRunner:
        """A runner on the user's own thread for the conversation (other users cannot reach it)."""
        context = Context(user_id=user_id, conversation_id=conversation_id, data_dir=self.data_dir)
        thread = thread_id_for(user_id, conversation_id)
        return PlanRunner(
            self.graph,
            context,
            thread_id=thread,
            services=self.services,
            advice=HTTP_ADVICE,
            locks=self.locks,
        )

    def in_pool(self, func: Callable[..., Any], *args: Any, user: str = "") -> asyncio.Future:
        """Run `func(*args)` on the turn pool, within `user`'s fair share of it.

        A user runs at most half of the workers' turns at once (at least one); their further turns
        wait for their own earlier ones, so another user's turn always finds a free worker.
        """
        return asyncio.ensure_future(self._in_share(user, functools.partial(func, *args)))

    async def _in_share(self, user: str, call: Callable[[], Any]) -> Any:
        share = self._shares.get(user)
        if share is None:
            share = self._shares[user] = asyncio.Semaphore(max(1, self.pool._max_workers // 2))
        async with share:
            return await asyncio.get_running_loop().run_in_executor(self.pool, call)


def _request_text(messages: list[Any]) -> str:
    last = messages[-1] if messages else None
    if isinstance(last, BaseMessage):
        return last.text
    if isinstance(last, dict):
        content = last.get("content") or ""
        if isinstance(content, list):  # content parts, as OpenAI and LangChain clients send them
            return "".join(_part_text(part) for part in content)
        return str(content)
    return str(last or "")


def _part_text(part: Any) -> str:
    """The text of one content part: a string or {"type": "text", "text": ...}; other parts carry none."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return part["text"]
    return ""


class ConversationRunnable(Runnable[dict[str, Any], dict[str, Any]]):
    """plangraph as a LangServe runnable; user and conversation come from `config["configurable"]`."""

    def __init__(self, backend: Callable[[], Backend]) -> None:
        """`backend` returns the server's Backend (it is opened when the server starts)."""
        self._backend = backend

    @property
    def InputType(self) -> type:  # noqa: N802 (LangChain's name)
        """What a caller sends."""
        return HttpInput

    @property
    def OutputType(self) -> type:  # noqa: N802 (LangChain's name)
        """What a turn returns."""
        return HttpOutput

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """`thread_id` (the conversation) and `user_id` (set by the server from the API key)."""
        return [
            ConfigurableFieldSpec(
                id="thread_id",
                annotation=str,
                name="Conversation id",
                description="Your conversation id; empty starts a new one (see conversationId in the output).",
                default="",
            ),
            ConfigurableFieldSpec(
                id="user_id",
                annotation=str,
                name="User id",
                description="Taken from your API key; any other value is refused (403).",
                default="",
            ),
        ]

    def check(self, input: dict[str, Any], config: RunnableConfig) -> None:
        """Raise the UserFacingError a turn would raise, before anything runs (for streams)."""
        runner = self._runner(input, config)
        # Busy now → ConversationBusyError here, so a stream answers 409 instead of an error event.
        with runner.locks.hold(
            str(runner.config["configurable"]["thread_id"]), runner.context.conversation_id
        ):
            pass
        if "resume" in input:
            runner.resume_input(input["resume"])
        else:
            runner.run_input(_request_text(input["messages"]))

    def _runner(self, input: dict[str, Any], config: RunnableConfig) -> PlanRunner:
        configurable = config.get("configurable") or {}
        user = str(configurable.get("user_id") or Context().user_id)
        conversation = str(configurable.get("thread_id") or "")
        has_resume, has_messages = "resume" in input, bool(input.get("messages"))
        if has_resume == has_messages:
            raise UserFacingError('input 需要 "messages"（新请求）或 "resume"（回答问题）二者之一。')
        if has_resume and not conversation:
            raise ConversationStateError(
                "回答问题需要会话 ID：在 config.configurable.thread_id 或请求头 X-Conversation-Id 中给出。"
            )
        return self._backend().runner(user, conversation or uuid.uuid4().hex[:12])

    def _turn(
        self, input: dict[str, Any], config: RunnableConfig, on_chunk: Callable[[dict], None] | None
    ) -> dict[str, Any]:
        runner = self._runner(input, config)
        data_dir = self._backend().data_dir
        sent = on_chunk and (lambda c: on_chunk(public(c, data_dir, runner.context.conversation_id)))
        # A fresh context: the graph must not report into the caller's callbacks (stream_events
        # would then carry LangGraph internals such as Send, which LangServe cannot serialise).
        if "resume" in input:
            outcome = contextvars.Context().run(runner.resume, input["resume"], sent)
        else:
            outcome = contextvars.Context().run(runner.run, _request_text(input["messages"]), sent)
        return public(_output(runner, outcome), data_dir, runner.context.conversation_id)

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run one turn and return its result (with `__interrupt__` when a question waits)."""

        def turn(
            inp: dict[str, Any], run_manager: CallbackManagerForChainRun, config: RunnableConfig
        ) -> dict:
            return self._turn(inp, config, None)

        return self._call_with_config(turn, dict(input), config, run_type="chain")

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Async twin of `invoke`, on the server's turn pool."""
        user = str(((config or {}).get("configurable") or {}).get("user_id") or "")
        return await self._backend().in_pool(self.invoke, input, config, user=user)

    async def abatch(
        self,
        inputs: list[dict[str, Any]],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Every input checked before any runs; then the turns, as `ainvoke` each.

        Without the check, one unusable input (a wrong answer, a second input on the same
        conversation) failed the whole batch with 422/409 "nothing changed" after the others ran.
        """
        configs = get_config_list(config, len(inputs))
        seen: dict[str, int] = {}
        for item, item_config in zip(inputs, configs, strict=True):
            conversation = str((item_config.get("configurable") or {}).get("thread_id") or "")
            if conversation:
                seen[conversation] = seen.get(conversation, 0) + 1
            await asyncio.to_thread(self.check, dict(item), item_config)
        twice = [c for c, n in seen.items() if n > 1]
        if twice:
            raise UserFacingError(
                f"一次批量请求里每个会话只能有一个输入：会话 {twice[0]} 出现了 {seen[twice[0]]} 次。"
                "没有执行任何输入：请把同一会话的几轮分开依次发送。"
            )
        return await super().abatch(inputs, configs, return_exceptions=return_exceptions, **kwargs)

    def stream(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[dict[str, Any]]:
        """Yield the DESIGN stream chunks of the turn in order, then its result."""
        yield from self._transform_stream_with_config(iter([input]), self._transform, config)

    async def astream(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """Async twin of `stream`: the turn runs in a worker thread, chunks arrive as they happen."""

        async def one() -> AsyncIterator[dict[str, Any]]:
            yield input

        async for chunk in self._atransform_stream_with_config(one(), self._atransform, config):
            yield chunk

    def _transform(
        self,
        inputs: Iterator[dict[str, Any]],
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> Iterator[dict[str, Any]]:
        chunks: queue.Queue = queue.Queue()
        done: dict[str, Any] = {}

        def work() -> None:
            try:
                done["output"] = self._turn(dict(next(inputs)), config, chunks.put)
            except BaseException as error:  # handed to the caller's thread below
                done["error"] = error
            chunks.put(done)

        threading.Thread(target=work, daemon=True).start()
        while (chunk := chunks.get()) is not done:
            yield chunk
        if "error" in done:
            raise done["error"]
        yield done["output"]

    async def _atransform(
        self,
        inputs: AsyncIterator[dict[str, Any]],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> AsyncIterator[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[dict | None] = asyncio.Queue()
        first = [item async for item in inputs][0]

        def push(chunk: dict | None) -> None:
            loop.call_soon_threadsafe(chunks.put_nowait, chunk)

        user = str((config.get("configurable") or {}).get("user_id") or "")
        task = self._backend().in_pool(self._turn, dict(first), config, push, user=user)
        task.add_done_callback(lambda _: push(None))
        while (chunk := await chunks.get()) is not None:
            yield chunk
        yield await task


def _output(runner: PlanRunner, outcome: RunOutcome) -> dict[str, Any]:
    conversation = runner.context.conversation_id
    out: dict[str, Any] = {
        "conversationId": conversation,
        "plan": outcome.plan,
        "summary": outcome.summary,
        "artifacts": [artifact_url(conversation, p) for p in outcome.artifacts],
    }
    if outcome.interrupt is not None:
        out["__interrupt__"] = [{"value": outcome.interrupt}]
    return out
