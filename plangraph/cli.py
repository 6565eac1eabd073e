"""`plangraph` command line: run a request, answer a waiting step, show a plan."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

from plangraph import server, waiting
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
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="plan and run a request")
    run.add_argument("request")
    run.add_argument("--answer", action="append", default=[], help="answer to the next question (repeatable)")
    resume = sub.add_parser("resume", help="answer the question a conversation is waiting on")
    resume.add_argument("answer", nargs="?", default=None)
    plan = sub.add_parser("plan", help="show a conversation's current plan")
    plan.add_argument("--format", choices=["json", "dot", "svg", "png"], default="json")
    plan.add_argument("--output", "-o", help="file to write (svg/png need one)")
    plan.add_argument("--step", type=int, default=None, help="show this step's internal plan (EP) instead")
    for sp in (run, resume, plan):
        sp.add_argument("--user", default=None, help="user id (default: PLANGRAPH_USER_ID or 'default')")
        sp.add_argument("--conversation", default=None, help="conversation id (= thread id)")
    for sp in (run, resume):
        sp.add_argument("--json", action="store_true", help="one JSON event per line")
    # Subcommands owned by their modules (arguments and behaviour live there).
    waiting.configure_pending(sub.add_parser("pending", help="list plans waiting for an answer"))
    waiting.configure_remind(sub.add_parser("remind", help="call the reminder hook for old waiting plans"))
    server.configure_serve(sub.add_parser("serve", help="serve the HTTP API (LangServe-compatible)"))
    return p


class _Printer:
    """Shows events to a person (rich) or as JSON lines."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        if not as_json:
            from rich.console import Console

            self.console = Console(highlight=False, soft_wrap=True)

    def event(self, kind: str, **fields: Any) -> None:
        if self.as_json:
            sys.stdout.write(json.dumps({"event": kind, **fields}, ensure_ascii=False, default=str) + "\n")
            sys.stdout.flush()
            return
        if kind == "chunk":
            label = "计划" if fields["index"] < 0 else f"步骤 {fields['index']}"
            if "agentChatResponse" in fields:
                from rich.panel import Panel

                resp = fields["agentChatResponse"]
                self.console.print(Panel(resp["content"], title=f"{label} · {resp['intent']}", expand=False))
            else:
                self.console.print(f"[dim]{label}[/dim] {fields['content']}")
        elif kind == "interrupt":
            self.console.print(
                f"[bold yellow]需要您补充（步骤 {fields['seqNo']}）：[/bold yellow]{fields['question']}"
            )
        elif kind == "final":
            if fields["artifacts"]:
                self.console.print("[bold]报告与文件：[/bold]\n" + "\n".join(fields["artifacts"]))
        elif kind == "error":
            self.console.print(f"[bold red]错误：[/bold red]{fields['message']}")


def _drive(
    runner: PlanRunner, first: RunOutcome, answers: deque[str], printer: _Printer, conversation: str
) -> int:
    outcome = first
    while outcome.interrupt is not None:
        printer.event("interrupt", **outcome.interrupt)
        if answers:
            answer = answers.popleft()
        elif sys.stdin.isatty() and not printer.as_json:
            answer = input("> ")
        else:
            if not printer.as_json:
                print(
                    f'用以下命令回答：plangraph resume --conversation {conversation} "您的回答"',
                    file=sys.stderr,
                )
            return EXIT_WAITING
        outcome = runner.resume(answer, on_chunk=lambda c: printer.event("chunk", **c))
    printer.event("final", plan=outcome.plan, summary=outcome.summary, artifacts=outcome.artifacts)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `plangraph` console script."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command in ("pending", "remind", "serve"):
        handler = {"pending": waiting.run_pending, "remind": waiting.run_remind, "serve": server.run_serve}
        try:
            return handler[args.command](args)
        except UserFacingError as error:
            print(f"错误：{error}", file=sys.stderr)
            return error.exit_code
    printer = _Printer(getattr(args, "json", False))
    conversation = args.conversation or (uuid.uuid4().hex[:12] if args.command == "run" else None)
    if conversation is None:
        printer.event("error", message="请用 --conversation 指定会话。")
        return EXIT_USAGE
    from plangraph.runner import PlanRunner  # heavy (graph, agents, models): only for these commands

    try:
        with PlanRunner.open(user_id=args.user, conversation_id=conversation) as runner:
            if args.command == "plan":
                sys.stdout.write(runner.render_plan(args.format, args.output, step=args.step))
                return EXIT_OK
            on_chunk = lambda c: printer.event("chunk", **c)  # noqa: E731
            if args.command == "run":
                if not printer.as_json:
                    printer.console.print(f"[dim]会话：{conversation}[/dim]")
                outcome = runner.run(args.request, on_chunk=on_chunk)
                return _drive(runner, outcome, deque(args.answer), printer, conversation)
            outcome = runner.resume(args.answer, on_chunk=on_chunk)
            return _drive(runner, outcome, deque(), printer, conversation)
    except UserFacingError as error:
        printer.event("error", message=str(error))
        return error.exit_code
    except KeyboardInterrupt:
        printer.event("error", message="已中断；进度已保存，可用 plangraph resume 继续。")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
