"""What leaves the server: artifact paths become `/artifacts/...` URLs, never the server's own paths.

Agents write files under `<data_dir>/artifacts/<user>/<conversation>/` and name them relative to
the data dir in their context and the summary (`artifacts/<user>/<conversation>/<file>`; their
output text uses the file name); the CLI resolves them to local paths. Everything the HTTP API
sends goes through `public()` first: an artifact's name (relative, or an absolute path in older
checkpoints) becomes the URL the API serves it at, and any other path inside the data dir becomes
its file name.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["public"]

_NAME = r"[\w.%-]+"  # artifact path parts (ids are %XX-escaped)


@lru_cache(maxsize=16)
def _patterns(data_dir: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    root = re.escape(data_dir.rstrip("/"))
    # an absolute artifact path, or a data-dir-relative name (not the tail of some other path)
    artifact = re.compile(rf"(?:{root}/|(?<![\w/.%-]))artifacts/{_NAME}/{_NAME}/({_NAME})")
    other = re.compile(rf"{root}(?:/{_NAME})*/({_NAME})")
    return artifact, other


def public(value: Any, data_dir: str | Path, conversation_id: str) -> Any:
    """`value` (JSON-like) with every data-dir path in its strings replaced by a URL or file name."""
    artifact, other = _patterns(str(data_dir))

    def text(s: str) -> str:
        if str(data_dir) not in s and "artifacts/" not in s:
            return s
        s = artifact.sub(lambda m: f"/artifacts/{conversation_id}/{m.group(1)}", s)
        return other.sub(lambda m: m.group(1), s)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return text(v)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return walk(value)
