"""`plangraph` command line: run a request, chat, answer a waiting step, show plans, memory, serve."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

from graphs.context import SettingError
from plangraph import cli_kb, cli_memory, conversations, server, waiting
from plangraph.errors import UserFacingError

if TYPE_CHECKING:
    from plangraph.runner import PlanRunner, RunOutcome

__all__ = ["main"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_WAITING = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="plangraph", description="Multi-agent planner/executor (PV investment expert)."
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log plan states (English) to stderr")
    p.add_argument("--version", action="version", version=f"plangraph {_version()}")
    p.add_argument(
        "--data-dir", default=None, help="data directory (default: PLANGRAPH_DATA_DIR or ./.plangraph)"
    )
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="plan and run a request")
    chat = sub.add_parser("chat", help="talk on one conversation: requests and answers, until exit")
    run.add_argument("request")
    run.add_argument("--answer", action="append", default=[], help="answer to the next question (repeatable)")
    resume = sub.add_parser("resume", help="answer the question a conversation is waiting on")
    resume.add_argument("answer", nargs="?", default=None)
    resume.add_argument(
        "--fields",
        default=None,
        metavar="JSON",
        help="answer with input fields, a JSON object such as '{\"capacity_kw\": 500}' (with ANSWER too: both)",
    )
    plan = sub.add_parser("plan", help="show a conversation's current plan")
    plan.add_argument(
        "--format", choices=["json", "dot", "svg", "png"], default="json", help="svg/png need Graphviz `dot`"
    )
    plan.add_argument("--output", "-o", help="file to write (svg/png need one)")
    plan.add_argument("--step", type=int, default=None, help="show this step's internal plan (EP) instead")
    for sp in (run, chat, resume, plan):
        sp.add_argument("--user", default=None, help="user id (default: PLANGRAPH_USER_ID or 'default')")
        sp.add_argument("--conversation", default=None, help="conversation id (= thread id)")
    for sp in (run, resume):
        sp.add_argument("--json", action="store_true", help="one JSON event per line")
    # Subcommands owned by their modules (arguments and behaviour live there).
    waiting.configure_pending(sub.add_parser("pending", help="list plans waiting for an answer"))
    waiting.configure_remind(sub.add_parser("remind", help="call the reminder hook for old waiting plans"))
    conversations.configure_conversations(
        sub.add_parser("conversations", help="list a user's conversations (last request, status, time)")
    )
    cli_memory.configure_memory(
        sub.add_parser(
            "memory", help="a conversation's memory (search, blocks); your long-term facts (facts, forget)"
        )
    )
    cli_kb.configure_kb(
        sub.add_parser("kb", help="your own documents in the knowledge base (add, list, remove, search)")
    )
    server.configure_serve(sub.add_parser("serve", help="serve the HTTP API and the chat page"))
    return p


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("plangraph")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


class _OutputClosed(Exception):
    """stdout was closed by the reader (`plangraph … | head`); not a service error to retry."""


class _Quiet:
    """The spinner's text: what the run said last and, after a second of silence, for how long."""

    def __init__(self) -> None:
        self.what, self.since = "正在准备", time.monotonic()

    def note(self, what: str) -> None:
        self.what, self.since = what, time.monotonic()

    def __rich__(self) -> str:
        waited = time.monotonic() - self.since
        return f"[dim]{self.what} · 已等待 {waited:.0f} 秒[/dim]" if waited >= 1 else ""


class _Printer:
    """Shows events to a person (rich) or as JSON lines; each step result, table and file list once.

    On a terminal a spinner runs while the graph works, with the time since the last message.
    """

    def __init__(self, as_json: bool, console: Any = None) -> None:
        self.as_json = as_json
        self.shown: list[str] = []  # step results already shown in a panel
        self.quiet = _Quiet()
        self._spinner: Any = None
        if not as_json:
            from rich.console import Console

            self.console = console or Console(highlight=False, soft_wrap=True)

    def working(self, what: str) -> None:
        """The graph is about to work: show a spinner (terminals only) until the next stop."""
        if self.as_json or not self.console.is_terminal:
            return
        self.quiet.note(what)
        if self._spinner is None:
            self._spinner = self.console.status(self.quiet, spinner="dots")
            self._spinner.start()

    def stopped(self) -> None:
        """The graph stopped (question, result, error): take the spinner away."""
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None

    def event(self, kind: str, **fields: Any) -> None:
        try:
            if kind != "chunk":
                self.stopped()
            self._event(kind, **fields)
            if kind == "chunk" and self._spinner is not None:
                label = "计划" if fields["index"] < 0 else f"步骤 {fields['index']}"
                self.quiet.note(
                    f"{label} · {fields['content'].splitlines()[0][:40] if fields['content'] else ''}"
                )
        except BrokenPipeError:
            raise _OutputClosed from None

    def _event(self, kind: str, **fields: Any) -> None:
        if self.as_json:
            sys.stdout.write(json.dumps({"event": kind, **fields}, ensure_ascii=False, default=str) + "\n")
            sys.stdout.flush()
            return
        from rich.panel import Panel
        from rich.text import Text

        # Everything below but our own labels is text from the run (requests, answers, file names):
        # shown as plain text, never read as rich markup ("[/x]" in an answer raised MarkupError).
        if kind == "chunk":
            label = "计划" if fields["index"] < 0 else f"步骤 {fields['index']}"
            resp = fields.get("agentChatResponse")
            if resp is not None:
                if resp["intent"].endswith("_question"):
                    return  # the question follows in its own panel
                self.shown.append(resp["content"].strip())
                # soft_wrap off: long lines wrap inside the panel instead of being cut at its edge
                self.console.print(
                    Panel(Text(resp["content"]), title=Text(f"{label} · {resp['intent']}")), soft_wrap=False
                )
            elif fields["index"] < 0 and self.shown:
                text = _without_repeats(fields["content"], self.shown)
                if text:
                    self.console.print(f"[dim]{label}[/dim] {_plain(text)}")
            else:
                self.console.print(f"[dim]{label}[/dim] {_plain(fields['content'])}")
        elif kind == "interrupt":
            title = f"需要您补充（步骤 {fields['seqNo']}）"
            self.console.print(
                Panel(Text(fields["question"]), title=title, border_style="yellow"), soft_wrap=False
            )
        elif kind == "final":
            if fields["artifacts"]:
                self.console.print("[bold]报告与文件：[/bold]\n" + _plain("\n".join(fields["artifacts"])))
        elif kind == "error":
            self.console.print(f"[bold red]错误：[/bold red]{_plain(fields['message'])}")


def _plain(text: str) -> str:
    """`text` with rich markup escaped, so that "[/x]" in an answer or an id prints as typed."""
    from rich.markup import escape

    return escape(text)


def _without_repeats(summary: str, shown: list[str]) -> str:
    """The offline summary without what the person has just read.

    Step results (or their briefs) shown in panels keep only their heading; the file list is left
    to the final "报告与文件" block.
    """
    kept = []
    for part in summary.split("\n\n"):
        head, _, body = part.strip().partition("\n")
        if head.startswith("生成的文件"):
            continue
        kept.append(head if head.startswith("【") and _seen(body, shown) else part.strip())
    return "\n".join(p for p in kept if p)


def _seen(body: str, shown: list[str]) -> bool:
    """True when every line of `body` (a step result, or its brief ending in "…") was in one panel."""
    lines = [line for line in body.splitlines() if line.strip() not in ("", "…")]
    return bool(lines) and any(all(line in text for line in lines) for text in shown)


def _drive(
    runner: PlanRunner, first: RunOutcome, answers: deque[str], printer: _Printer, conversation: str
) -> int:
    outcome = first
    while outcome.interrupt is not None:
        printer.event("interrupt", **outcome.interrupt)
        if answers:
            answer = answers.popleft()
        elif sys.stdin.isatty() and not printer.as_json:
            runner.warm_up()  # the embedding model loads while the person types
            answer = input("> ")
        else:
            if not printer.as_json:
                print(
                    f'用以下命令回答：plangraph resume --conversation {conversation} "您的回答"',
                    file=sys.stderr,
                )
            return EXIT_WAITING
        printer.working("正在继续")
        outcome = runner.resume(answer, on_chunk=lambda c: printer.event("chunk", **c))
    printer.event("final", plan=outcome.plan, summary=outcome.summary, artifacts=outcome.artifacts)
    return EXIT_OK


def _chat(runner: PlanRunner, printer: _Printer, conversation: str) -> int:
    """Read requests and answers from stdin on one conversation until EOF or `exit`."""
    printer.stopped()
    printer.console.print(
        f"[dim]会话：{_plain(conversation)}。输入需求，回车发送；有问题时直接输入回答；exit 或 Ctrl-D 退出。[/dim]"
    )
    on_chunk = lambda c: printer.event("chunk", **c)  # noqa: E731
    state = runner.snapshot()
    waiting = bool(state is not None and state.interrupts)
    if state is not None and state.interrupts:
        printer.event("interrupt", **state.interrupts[0].value)
    while True:
        if waiting:
            runner.warm_up()  # the embedding model loads while the person types the answer
        try:
            text = input("回答> " if waiting else "您> ").strip()
        except EOFError:
            print()
            return EXIT_OK
        if text.lower() in ("exit", "quit", "退出"):
            return EXIT_OK
        if not text:
            continue
        try:
            printer.working("正在继续" if waiting else "正在规划")
            outcome = (
                runner.resume(text, on_chunk=on_chunk) if waiting else runner.run(text, on_chunk=on_chunk)
            )
        except UserFacingError as error:
            printer.event("error", message=str(error))
            continue
        waiting = outcome.interrupt is not None
        if outcome.interrupt is not None:
            printer.event("interrupt", **outcome.interrupt)
        else:
            printer.event("final", plan=outcome.plan, summary=outcome.summary, artifacts=outcome.artifacts)


def _resume_value(answer: str | None, fields: str | None) -> Any:
    """What `plangraph resume` answers with: the text, or the `--fields` object (plus the text)."""
    if fields is None:
        return answer
    try:
        value = json.loads(fields)
    except (ValueError, RecursionError) as error:
        raise UserFacingError(
            f"--fields 不是有效的 JSON（{str(error)[:80]}）：请给出 JSON 对象，如 '{{\"capacity_kw\": 500}}'。"
        ) from None
    if not isinstance(value, dict):
        raise UserFacingError(
            f"--fields 应为 JSON 对象（字段名: 值），收到的是 {type(value).__name__}：如 '{{\"capacity_kw\": 500}}'。"
        )
    return {**value, "answer": answer} if answer else value


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `plangraph` console script."""
    try:
        return _main(argv)
    except (BrokenPipeError, _OutputClosed):
        # The reader went away (`plangraph conversations | head`): stop quietly, as cat and ls do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR


def _setting(error: SettingError) -> str:
    return f"设置有误：{error}。没有改动任何内容。"


def _undecodable(args: argparse.Namespace) -> str | None:
    """The first argument that held bytes which are not UTF-8 (Python keeps them as lone surrogates)."""
    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return name
    return None


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    bad = _undecodable(args)
    if bad is not None:
        option = (
            bad
            if bad in ("request", "answer", "query", "paths", "fact", "id")
            else "--" + bad.replace("_", "-")
        )
        message = (
            f"参数 {option} 含有不是 UTF-8 的字节：请把终端或脚本的编码设为 UTF-8（如 LANG=C.UTF-8）后重试。"
            "没有改动任何内容。"
        )
        if getattr(args, "json", False):
            _Printer(True).event("error", message=message)
        else:
            print(f"错误：{message}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    handlers = {
        "pending": waiting.run_pending,
        "remind": waiting.run_remind,
        "serve": server.run_serve,
        "conversations": conversations.run_conversations,
        "memory": cli_memory.run_memory,
        "kb": cli_kb.run_kb,
    }
    if args.command in handlers:
        try:
            return handlers[args.command](args)
        except UserFacingError as error:
            print(f"错误：{error}", file=sys.stderr)
            return error.exit_code
        except SettingError as error:
            print(f"错误：{_setting(error)}", file=sys.stderr)
            return EXIT_USAGE
    printer = _Printer(getattr(args, "json", False))
    new = args.command in ("run", "chat")
    conversation = args.conversation or (uuid.uuid4().hex[:12] if new else None)
    if conversation is None:
        printer.event("error", message="请用 --conversation 指定会话。")
        return EXIT_USAGE
    if args.command != "plan":
        printer.working("正在启动")  # loading the graph and its agents takes a second or more
    try:
        from plangraph.runner import PlanRunner  # heavy (graph, agents, models): only for these commands

        with PlanRunner.open(
            user_id=args.user, conversation_id=conversation, data_dir=args.data_dir
        ) as runner:
            if args.command == "plan":
                sys.stdout.write(runner.render_plan(args.format, args.output, step=args.step))
                return EXIT_OK
            if args.command == "chat":
                return _chat(runner, printer, conversation)
            on_chunk = lambda c: printer.event("chunk", **c)  # noqa: E731
            if args.command == "run":
                if not printer.as_json:
                    printer.console.print(f"[dim]会话：{_plain(conversation)}[/dim]")
                printer.working("正在规划")
                outcome = runner.run(args.request, on_chunk=on_chunk)
                return _drive(runner, outcome, deque(args.answer), printer, conversation)
            printer.working("正在继续")
            outcome = runner.resume(_resume_value(args.answer, args.fields), on_chunk=on_chunk)
            return _drive(runner, outcome, deque(), printer, conversation)
    except UserFacingError as error:
        printer.event("error", message=str(error))
        return error.exit_code
    except SettingError as error:
        printer.event("error", message=_setting(error))
        return EXIT_USAGE
    except KeyboardInterrupt:
        printer.event("error", message="已中断；进度已保存，可用 plangraph resume 继续。")
        return EXIT_ERROR
    finally:
        printer.stopped()


if __name__ == "__main__":
    sys.exit(main())
