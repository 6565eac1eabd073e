"""On a terminal the CLI shows a spinner with the time since the run last said something."""

from __future__ import annotations

import io
import time

from rich.console import Console

from plangraph.cli import _Printer


def _printer(terminal: bool) -> tuple[_Printer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100, highlight=False, soft_wrap=True)
    return _Printer(False, console=console), out


def test_a_wait_over_a_second_shows_what_the_run_said_last_and_for_how_long():
    printer, out = _printer(terminal=True)
    printer.working("正在规划")
    printer.event("chunk", index=0, content="正在计算 NPV、IRR、LCOE 和回收期…")
    time.sleep(1.5)  # a quiet second and a half (the cold start sat here for 8 s)
    printer.event("interrupt", seqNo=0, question="装机容量是多少？")
    text = out.getvalue()
    assert "步骤 0 · 正在计算 NPV、IRR、LCOE 和回收期… · 已等待 1 秒" in text
    assert printer._spinner is None  # gone before the question is asked


def test_no_spinner_when_the_output_is_not_a_terminal():
    printer, out = _printer(terminal=False)
    printer.working("正在规划")
    printer.event("chunk", index=0, content="正在计算 NPV…")
    time.sleep(1.2)
    printer.event("final", plan=None, summary="", artifacts=[])
    assert "已等待" not in out.getvalue() and printer._spinner is None
