"""A user's conversations, from the plan store: last request, status and time of each.

Shared by `plangraph conversations` and the web page's `GET /conversations`.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

__all__ = ["STATUS_TEXT", "configure_conversations", "conversation_list", "run_conversations"]

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


def configure_conversations(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph conversations`."""
    parser.add_argument("--user", default=None, help="whose conversations (default: PLANGRAPH_USER_ID)")
    parser.add_argument("--json", action="store_true", help="a JSON array instead of text")


def run_conversations(args: argparse.Namespace) -> int:
    """List the user's conversations, newest first: id, status, time, last request."""
    from graphs.context import Context
    from plangraph.waiting import format_age, open_store

    user = args.user or Context().user_id
    store = open_store(getattr(args, "data_dir", None))
    rows = conversation_list(store.list(user_id=user)) if store else []
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print(f"用户 {user} 还没有会话。用 plangraph run 或 plangraph chat 开始一个。")
        return 0
    now = time.time()
    print(f"用户 {user} 的 {len(rows)} 个会话（最新在前）：")
    for row in rows:
        print(f"- {row['conversationId']} · {row['statusText']} · {format_age(now - row['updatedAt'])}")
        print(f"  {row['request']}")
        if row["question"]:
            print(f"  等待回答：{row['question']}")
    return 0
