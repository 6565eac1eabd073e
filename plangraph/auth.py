"""API keys → user ids, per-key rate limits, and per-user thread ids for the HTTP API.

Keys come from `PLANGRAPH_API_KEYS="key1:user1,key2:user2"` or from the file named by
`PLANGRAPH_API_KEYS_FILE` (one `key:user` per line, `#` comments). Stdlib only: the CLI
imports this module's callers on every command.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

__all__ = ["RateLimiter", "load_api_keys", "parse_api_keys", "thread_id_for"]


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

    def acquire(self, key: str) -> float:
        """Take one request for `key`: 0 when allowed, else the seconds to wait before retrying."""
        if self.per_minute <= 0:
            return 0.0
        rate = self.per_minute / 60.0
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.get(key, (self.per_minute, now))
            tokens = min(self.per_minute, tokens + (now - stamp) * rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return max(1.0, math.ceil((1.0 - tokens) / rate))
