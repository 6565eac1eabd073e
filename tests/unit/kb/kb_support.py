"""The knowledge agent run on one question, as the executor would run its step (kb unit tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nodes.agents.knowledge import AGENT
from nodes.kit.step import InMemoryAgentMemory, StepContext
from tools.kb.index import KnowledgeIndex


def run_knowledge_agent(
    data_dir: Path, index: KnowledgeIndex, question: str, events: list[Any] | None = None
) -> dict:
    """The agent's result for `question` over `index` (plan p1, step 0, user u, conversation c).

    The progress events it emits are appended to `events` when given.
    """
    ctx = StepContext(
        plan_id="p1",
        seq_no=0,
        agent_name="knowledge",
        requirement=question,
        user_query=question,
        plan_context={},
        deps={},
        user_id="u",
        conversation_id="c",
        data_dir=data_dir,
        memory=InMemoryAgentMemory(),
        emit=(events.append if events is not None else lambda _event: None),
        knowledge=lambda: index,
    )
    return dict(AGENT.run(ctx))


MANUAL_FILE = Path(__file__).resolve().parent / "data" / "user_manual.json"


def write_manual_docx(folder: Path) -> Path:
    """The user's Word manual (data/user_manual.json) written to a real .docx in `folder` (python-docx)."""
    from docx import Document

    manual = json.loads(MANUAL_FILE.read_text("utf-8"))
    doc = Document()
    doc.add_heading(manual["title"], level=1)
    for section in manual["sections"]:
        doc.add_heading(section["heading"], level=2)
        doc.add_paragraph(section["text"])
    path = folder / manual["name"]
    doc.save(str(path))
    return path
