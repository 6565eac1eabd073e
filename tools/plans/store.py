"""Finished and waiting ExecutionPlans, by planId, in SQLite under the data dir."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from tools.contracts import ExecutionPlan
from tools.sqlite_file import open_sqlite

__all__ = ["PlanStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    plan_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    status TEXT NOT NULL,
    question TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    plan_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS plans_by_user ON plans(user_id, status, updated_at);
CREATE TABLE IF NOT EXISTS reminders (
    plan_id TEXT NOT NULL,
    reminded_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS reminders_by_plan ON reminders(plan_id, reminded_at);
"""


class PlanStore:
    """Upsert and fetch plans; note when the user of a waiting plan was reminded.

    `status` is running | interrupted | completed | failed | superseded.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = open_sqlite(self.path, _SCHEMA)
        self._lock = threading.Lock()

    def save(
        self,
        plan: ExecutionPlan,
        *,
        user_id: str,
        conversation_id: str,
        status: str,
        question: str | None = None,
    ) -> None:
        """Insert or update a plan (created_at is kept from the first save)."""
        now = time.time()
        with self._lock, self._db:
            self._db.execute(
                """INSERT INTO plans VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(plan_id) DO UPDATE SET status=excluded.status, question=excluded.question,
                   updated_at=excluded.updated_at, plan_json=excluded.plan_json""",
                (
                    plan["planId"],
                    user_id,
                    conversation_id,
                    status,
                    question,
                    now,
                    now,
                    json.dumps(plan, ensure_ascii=False, default=str),
                ),
            )

    def get(self, plan_id: str, *, user_id: str | None = None) -> dict[str, Any] | None:
        """The stored record (with `plan`) or None; with `user_id`, only that user's plan."""
        sql = "SELECT * FROM plans WHERE plan_id = ?" + (" AND user_id = ?" if user_id is not None else "")
        args = (plan_id,) if user_id is None else (plan_id, user_id)
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        return _record(row) if row else None

    def list(
        self, *, user_id: str | None = None, status: str | None = None, conversation_id: str | None = None
    ) -> list[dict]:
        """Plans, newest first, filtered by user, status and conversation."""
        where, args = [], []
        for column, value in (("user_id", user_id), ("status", status), ("conversation_id", conversation_id)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = (
            "SELECT * FROM plans"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY updated_at DESC"
        )
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [_record(r) for r in rows]

    def record_reminder(self, plan_id: str, at: float | None = None) -> None:
        """Note that the user of a waiting plan was reminded (at `at`, default now)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO reminders VALUES (?, ?)", (plan_id, time.time() if at is None else at)
            )

    def last_reminders(self) -> dict[str, float]:
        """When each plan's user was last reminded, by planId (plans never reminded are absent)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT plan_id, MAX(reminded_at) FROM reminders GROUP BY plan_id"
            ).fetchall()
        return dict(rows)


def _record(row: tuple) -> dict[str, Any]:
    plan_id, user_id, conversation_id, status, question, created, updated, plan_json = row
    return {
        "planId": plan_id,
        "userId": user_id,
        "conversationId": conversation_id,
        "status": status,
        "question": question,
        "createdAt": created,
        "updatedAt": updated,
        "plan": json.loads(plan_json),
    }
