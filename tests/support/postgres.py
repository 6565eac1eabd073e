"""A throwaway PostgreSQL server for tests: initdb in a temp dir, free port on 127.0.0.1, stopped after.

    with postgres_server() as url:          # postgresql://postgres@127.0.0.1:<port>/plangraph
        with PlanRunner.open(..., checkpoint_url=url) as runner: ...

The binaries come from PATH, /usr/lib/postgresql/<version>/bin (the Debian `postgresql`
package) or /usr/local/bin. PostgreSQL refuses to run as root, so under root the server runs as
the `postgres` user (created by the Debian package; `nobody` otherwise) and the temp dir is
chowned to it. Durability is switched off (fsync, synchronous_commit) unless asked for: the data
is thrown away.
When no binary is found, `postgres_server()` skips the test locally and fails it in CI.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.local_server import backend_missing, free_port, stop_process, wait_until_ready

__all__ = ["find_postgres_bin", "postgres_server"]

DATABASE = "plangraph"


def find_postgres_bin() -> Path | None:
    """The directory holding `initdb` and `postgres`, newest version first; None when not installed."""
    candidates: list[str] = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).resolve().parent))
    versions = [p for p in glob.glob("/usr/lib/postgresql/*/bin") if Path(p).parent.name.isdigit()]
    candidates += sorted(versions, key=lambda p: int(Path(p).parent.name), reverse=True)
    candidates.append("/usr/local/bin")
    for directory in candidates:
        if (Path(directory) / "initdb").is_file() and (Path(directory) / "postgres").is_file():
            return Path(directory)
    return None


def _run_as() -> dict[str, Any]:
    """Popen arguments that drop root to an unprivileged user (empty when not root)."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")


@contextmanager
def postgres_server(timeout: float = 60.0, durable: bool = False) -> Iterator[str]:
    """Start PostgreSQL, create database `plangraph`, yield its URL; stop and delete everything after.

    `durable=True` keeps PostgreSQL's own defaults (fsync, synchronous commit, full-page writes), as
    a benchmark comparing it with SQLite needs; tests run without them.
    """
    bindir = find_postgres_bin()
    if bindir is None:
        backend_missing(
            "PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin); "
            "install it with: apt-get install postgresql"
        )
        raise AssertionError("unreachable")  # backend_missing always raises
    import psycopg

    drop = _run_as()
    # Not pytest's tmp_path: its parents are mode 0700 and the postgres user could not enter them.
    root = Path(tempfile.mkdtemp(prefix="plangraph-pg-"))
    if drop:
        os.chown(root, drop["user"], drop["group"])
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    log = root / "server.log"
    proc: subprocess.Popen | None = None
    try:
        init = subprocess.run(
            [str(bindir / "initdb"), "-D", str(root / "data"), "-U", "postgres", "--auth=trust"]
            + ["--encoding=UTF8", "--locale=C", "--no-sync"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            **drop,
        )
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed ({init.returncode}):\n{init.stdout}\n{init.stderr}")
        port = free_port()
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [str(bindir / "postgres"), "-D", str(root / "data"), "-p", str(port), "-k", str(root)]
                + ["-h", "127.0.0.1", "-c", "max_connections=50"]
                + (
                    []
                    if durable
                    else ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
                ),
                cwd=root,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **drop,
            )
        admin = f"postgresql://postgres@127.0.0.1:{port}/postgres"

        def accepts() -> bool:
            try:
                with psycopg.connect(admin, connect_timeout=2):
                    return True
            except psycopg.OperationalError:
                return False

        wait_until_ready(proc, accepts, log, f"PostgreSQL ({bindir}) on port {port}", timeout)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        yield f"postgresql://postgres@127.0.0.1:{port}/{DATABASE}"
    finally:
        if proc is not None:
            stop_process(proc, signal.SIGINT)  # SIGINT = fast shutdown: disconnect clients, exit
        shutil.rmtree(root, ignore_errors=True)
