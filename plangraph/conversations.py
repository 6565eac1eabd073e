"""A user's conversations, from the plan store: last request, status and time of each.

Shared by `plangraph conversations` and the web page's `GET /conversations`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["STATUS_TEXT", "conversation_list"]

# Plan-store statuses as the user reads them.
STATUS_TEXT = {
    "running": "运行中",
    "interrupted": "等待回答",
    "completed": "已完成",
    "failed": "失败",
    "superseded": "已被新请求取代",
}


def conversation_list(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per conversation from plan-store records (newest first, as `PlanStore.list` returns).

    Each row: conversationId, request (the newest plan's request), status (of that plan),
    statusText, updatedAt (Unix time), planId, question (while it waits), plans (how many).
    """
    rows: dict[str, dict[str, Any]] = {}
    for record in records:
        row = rows.get(record["conversationId"])
        if row is not None:
            row["plans"] += 1
            continue
        rows[record["conversationId"]] = {
            "conversationId": record["conversationId"],
            "request": record["plan"].get("userQuery", ""),
            "status": record["status"],
            "statusText": STATUS_TEXT.get(record["status"], record["status"]),
            "updatedAt": record["updatedAt"],
            "planId": record["planId"],
            "question": record["question"] if record["status"] == "interrupted" else None,
            "plans": 1,
        }
    return list(rows.values())
