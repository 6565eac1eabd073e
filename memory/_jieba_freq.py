"""jieba's word frequencies read from disk on demand, instead of loaded whole into every process.

`jieba.initialize()` unmarshals a dict of about 500k words and prefixes: 0.6 s of CPU before the
first Chinese word is cut, in every process — a third of a CLI run's time to its first streamed
chunk. Cutting a sentence only looks up its own substrings, so `DiskFreq` answers those lookups
from a SQLite table built once from jieba's own dictionary (the same words and counts, hence the
same cuts) and remembers each answer. Once it has remembered `WHOLE_AFTER` keys (a long
ingestion in a server) it loads the whole table into memory, as jieba would have at the start.

The table lives beside MiniLM's ONNX export (`~/.cache/plangraph`); `make install` builds it.
When the directory cannot be written, `jieba_tokenizer` falls back to jieba's own loading.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

__all__ = ["WHOLE_AFTER", "DiskFreq", "freq_table_path", "jieba_tokenizer"]

log = logging.getLogger("plangraph.memory")

CACHE_DIR = Path.home() / ".cache" / "plangraph"
WHOLE_AFTER = 100_000  # remembered keys after which the whole table is read into memory


class DiskFreq:
    """The read-only mapping jieba's `Tokenizer.FREQ` is used as (`in`, `[]`, `get`), backed by SQLite.

    Thread-safe: one connection behind a lock; answers are remembered, so a word is read once.
    """

    def __init__(self, path: Path) -> None:
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
        )
        self._memo: dict[str, int | None] = {}
        self._whole: dict[str, int] | None = None
        self._lock = threading.Lock()
        self.total = int(self._conn.execute("SELECT n FROM meta WHERE k='total'").fetchone()[0])

    def get(self, key: str, default: Any = None) -> Any:
        """The word's count (0 for a prefix that is no word), or `default` when jieba does not know it."""
        whole = self._whole
        if whole is not None:
            return whole.get(key, default)
        try:
            value = self._memo[key]
        except KeyError:
            value = self._read(key)
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __getitem__(self, key: str) -> int:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return int(value)

    def _read(self, key: str) -> int | None:
        with self._lock:
            if self._whole is not None:
                return self._whole.get(key)
            assert self._conn is not None
            row = self._conn.execute("SELECT n FROM f WHERE w=?", (key,)).fetchone()
            value = None if row is None else int(row[0])
            self._memo[key] = value
            if len(self._memo) >= WHOLE_AFTER:
                self._whole = dict(self._conn.execute("SELECT w, n FROM f"))
                self._conn.close()
                self._conn = None
                self._memo = {}
            return value


def freq_table_path(cache_dir: Path = CACHE_DIR) -> Path:
    """Where the table of the installed jieba's dictionary is kept (named by jieba's version and dictionary size)."""
    import jieba

    dictionary = Path(jieba.__file__).parent / jieba.DEFAULT_DICT_NAME
    size = dictionary.stat().st_size if dictionary.exists() else 0
    return cache_dir / f"jieba-freq-{jieba.__version__}-{size}.sqlite"


def _build(path: Path) -> None:
    """Write the table from jieba's dictionary file into a temporary file, then move it into place."""
    import jieba

    tokenizer = jieba.Tokenizer()
    freq, total = tokenizer.gen_pfdict(tokenizer.get_dict_file())
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".jieba-freq-", suffix=".tmp")
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("CREATE TABLE f(w TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE meta(k TEXT PRIMARY KEY, n INTEGER NOT NULL)")
            conn.executemany("INSERT INTO f VALUES(?, ?)", freq.items())
            conn.execute("INSERT INTO meta VALUES('total', ?)", (total,))
            conn.commit()
        finally:
            conn.close()
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from the user's other tools
        os.replace(tmp, path)  # atomic: another process sees the whole table or none
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _open(path: Path) -> DiskFreq:
    if not path.exists():
        _build(path)
    try:
        return DiskFreq(path)
    except sqlite3.DatabaseError:  # damaged (e.g. a disk error): build it again once
        path.unlink(missing_ok=True)
        _build(path)
        return DiskFreq(path)


def jieba_tokenizer(cache_dir: Path = CACHE_DIR) -> Any:
    """A `jieba.Tokenizer` of the default dictionary whose frequencies are read from disk on demand.

    Cuts exactly as jieba's default tokenizer does. Falls back to jieba's own loading (the whole
    dictionary in memory) when the table cannot be built or read.
    """
    import jieba

    tokenizer = jieba.Tokenizer()
    try:
        freq = _open(freq_table_path(cache_dir))
    except (OSError, sqlite3.Error) as error:
        log.info(
            "jieba frequency table unavailable in %s (%s); loading the dictionary whole", cache_dir, error
        )
        jieba.setLogLevel(logging.WARNING)
        tokenizer.initialize()
        return tokenizer
    tokenizer.FREQ = freq
    tokenizer.total = freq.total
    tokenizer.initialized = True
    return tokenizer
