"""Several processes opening the same new SQLite stores at once (server workers starting together).

SQLite answers a journal-mode switch that meets another connection's lock with "database is
locked" at once, without waiting; before `tools.sqlite_file.use_wal` retried it, 11 of 180 such
opens failed here, and a `plangraph serve --processes 2` run answered a first request with a 500.
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
OPENERS = ["open_sqlite", "checkpoints", "sessions"]


def _open_all(root: str, count: int, barrier, failures) -> None:  # noqa: ANN001 (multiprocessing proxies)
    sys.path.insert(0, str(ROOT))
    from plangraph.auth import SessionStore
    from plangraph.checkpoint import open_checkpointer
    from tools.sqlite_file import open_sqlite

    for i in range(count):
        folder = Path(root) / f"s{i}"
        for opener in OPENERS:
            barrier.wait()
            try:
                if opener == "open_sqlite":
                    open_sqlite(folder / "store.sqlite3", "CREATE TABLE IF NOT EXISTS t(a INTEGER);").close()
                elif opener == "checkpoints":
                    with open_checkpointer(folder, ""):
                        pass
                else:
                    SessionStore(folder / "sessions.sqlite3")
            except Exception as error:  # noqa: BLE001 — every failure is reported to the test
                failures.append(f"{opener} #{i}: {error!r}")


def test_three_processes_open_the_same_new_stores_at_once(tmp_path):
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier, failures = manager.Barrier(3), manager.list()
        workers = [
            context.Process(target=_open_all, args=(str(tmp_path), 15, barrier, failures)) for _ in range(3)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=300)
        assert [w.exitcode for w in workers] == [0, 0, 0]
        assert list(failures) == []
