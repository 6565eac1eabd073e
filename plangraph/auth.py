"""API keys → user ids, per-key rate limits, and per-user thread ids for the HTTP API.

Keys come from `PLANGRAPH_API_KEYS="key1:user1,key2:user2"` or from the file named by
`PLANGRAPH_API_KEYS_FILE` (one `key:user` per line, `#` comments). Stdlib only: the CLI
imports this module's callers on every command.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

__all__ = [
    "FailureLimiter",
    "RateLimiter",
    "SessionStore",
    "load_api_keys",
    "parse_api_keys",
    "thread_id_for",
]


def parse_api_keys(text: str, source: str = "PLANGRAPH_API_KEYS") -> dict[str, str]:
    """`key:user` pairs separated by commas or newlines → {key: user}; a bad entry names the fix."""
    keys: dict[str, str] = {}
    for n, raw in enumerate(text.replace(",", "\n").splitlines(), start=1):
        entry = raw.split("#", 1)[0].strip()
        if not entry:
            continue
        key, sep, user = (part.strip() for part in entry.partition(":"))
        if not sep or not key or not user:
            raise ValueError(f"{source}: entry {n} is not 'key:user' (got {entry[:4]}…); fix or remove it.")
        if key in keys and keys[key] != user:
            raise ValueError(
                f"{source}: one key is given to two users ({keys[key]}, {user}); keys must be unique."
            )
        keys[key] = user
    return keys


def load_api_keys(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Keys from PLANGRAPH_API_KEYS and PLANGRAPH_API_KEYS_FILE (both may be set; they are merged)."""
    env = os.environ if env is None else env
    keys = parse_api_keys(env.get("PLANGRAPH_API_KEYS", ""))
    path = env.get("PLANGRAPH_API_KEYS_FILE", "")
    if path:
        try:
            text = Path(path).expanduser().read_text(encoding="utf-8")
        except OSError as error:
            raise ValueError(f"PLANGRAPH_API_KEYS_FILE={path!r} cannot be read ({error.strerror}).") from None
        keys.update(parse_api_keys(text, source=path))
    return keys


def thread_id_for(user_id: str, conversation_id: str) -> str:
    """The checkpointer thread of a user's conversation; the user part is quoted so it cannot collide."""
    return f"{quote(user_id, safe='')}/{conversation_id}"


class RateLimiter:
    """A token bucket per key: `per_minute` requests a minute, bursts up to the same number."""

    def __init__(self, per_minute: float) -> None:
        self.per_minute = per_minute
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def acquire(self, key: str, count: int = 1) -> float:
        """Take `count` requests for `key`: 0 when allowed, else the seconds to wait before retrying.

        A count above the bucket size can never pass: `math.inf`.
        """
        if self.per_minute <= 0:
            return 0.0
        if count > self.per_minute:
            return math.inf
        rate = self.per_minute / 60.0
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(key, (self.per_minute, now))
            tokens = min(self.per_minute, tokens + (now - stamp) * rate)
            if tokens >= count:
                self._buckets[key] = (tokens - count, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return max(1.0, math.ceil((count - tokens) / rate))


class FailureLimiter:
    """Failed authentications, per client address and in total, with an exponential back-off.

    Only failures count and only failures are refused: a request with a valid key is never
    slowed down by this limiter, so an attacker (even one behind the same proxy address as every
    user) cannot lock valid keys out. A client that fails `per_client` times within `window`
    seconds is refused (429) for a back-off that doubles with each further block (1, 2, 4 … ×
    `window`, at most `max_backoff` s) and resets after a quiet `max_backoff`. Once `globally`
    failures from all clients together fall within one window, every further failure is refused
    until the window has room again.
    """

    def __init__(
        self, per_client: int = 10, globally: int = 100, window: float = 60.0, max_backoff: float = 900.0
    ) -> None:
        self.per_client, self.globally = per_client, globally
        self.window, self.max_backoff = window, max_backoff
        self._clients: dict[str, tuple[list[float], float, int]] = {}  # times, blocked until, strikes
        self._all: list[float] = []
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds before `client` may try a key again (0: it may now)."""
        if self.per_client <= 0 and self.globally <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            times, until, _ = self._clients.get(client, ([], 0.0, 0))
            wait = max(0.0, until - now)
            self._all = [t for t in self._all if now - t < self.window]
            if self.globally > 0 and len(self._all) >= self.globally:
                wait = max(wait, self.window - (now - self._all[0]))
            return wait

    def failed(self, client: str) -> None:
        """Record one failed authentication of `client`."""
        now = time.monotonic()
        with self._lock:
            times, until, strikes = self._clients.get(client, ([], 0.0, 0))
            if times and now - times[-1] > self.max_backoff:
                strikes = 0
            times = [t for t in times if now - t < self.window] + [now]
            if self.per_client > 0 and len(times) >= self.per_client:
                until = now + min(self.max_backoff, self.window * 2**strikes)
                strikes, times = strikes + 1, []
            self._clients[client] = (times, until, strikes)
            self._all.append(now)
            if len(self._clients) > 10_000:  # forget clients that are neither blocked nor recent
                self._clients = {
                    c: v
                    for c, v in self._clients.items()
                    if v[1] > now or (v[0] and now - v[0][-1] < self.window)
                }


class SessionStore:
    """Browser sessions of the playground: a random id in the cookie, the user on the server.

    Kept in SQLite in the data dir (only a SHA-256 of each id is stored), so every server process
    of the data dir knows every session, and `/logout` ends it everywhere. A session also remembers
    which key opened it: removing that key from the configuration ends its sessions.
    """

    def __init__(self, path: Path, lifetime: float = 8 * 3600) -> None:
        import sqlite3

        from tools.sqlite_file import use_wal

        self.lifetime = lifetime
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        use_wal(self._db)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS sessions(id TEXT PRIMARY KEY, user TEXT NOT NULL,"
            " key TEXT NOT NULL, expires REAL NOT NULL)"
        )
        self._lock = threading.Lock()

    @staticmethod
    def digest(secret: str) -> str:
        """SHA-256 of a session id or key (what the table stores)."""
        return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()

    def create(self, user: str, key: str) -> str:
        """A new session of `user`, opened with `key`; returns the id for the cookie."""
        session = secrets.token_urlsafe(32)
        now = time.time()
        with self._lock:
            self._db.execute("DELETE FROM sessions WHERE expires < ?", (now,))
            self._db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?)",
                (self.digest(session), user, self.digest(key), now + self.lifetime),
            )
        return session

    def lookup(self, session: str) -> tuple[str, str] | None:
        """(user, key digest) of a live session, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT user, key FROM sessions WHERE id = ? AND expires >= ?",
                (self.digest(session), time.time()),
            ).fetchone()
        return (row[0], row[1]) if row else None

    def end(self, session: str) -> None:
        """Forget a session (logout)."""
        with self._lock:
            self._db.execute("DELETE FROM sessions WHERE id = ?", (self.digest(session),))
