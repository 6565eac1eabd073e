"""jieba's frequencies read from disk on demand cut exactly as jieba's whole dictionary does."""

from __future__ import annotations

import logging
import re
import sqlite3
from pathlib import Path

import jieba
import pytest

from memory import _jieba_freq
from memory._jieba_freq import DiskFreq, freq_table_path, jieba_tokenizer

ROOT = Path(__file__).resolve().parents[3]
_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _runs() -> list[str]:
    """Chinese runs of the shipped knowledge notes and the labelled requests (real text, not made up)."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tools" / "kb" / "docs").rglob("*.md"))]
    texts.append((ROOT / "tests" / "understanding" / "cases.jsonl").read_text(encoding="utf-8"))
    return [run for text in texts for run in _RUN.findall(text)]


@pytest.fixture(scope="module")
def whole() -> jieba.Tokenizer:
    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer


@pytest.fixture(scope="module")
def runs() -> list[str]:
    found = _runs()
    assert sum(map(len, found)) > 5_000
    return found


def test_cuts_from_the_disk_table_equal_jiebas_own(tmp_path, whole, runs):
    cache = tmp_path / "a cache?#dir"  # characters a SQLite URI would misread
    lazy = jieba_tokenizer(cache)
    assert isinstance(lazy.FREQ, DiskFreq) and freq_table_path(cache).exists()
    assert lazy.total == whole.total
    for run in runs:
        assert lazy.lcut(run, HMM=False) == whole.lcut(run, HMM=False), run
    assert lazy.FREQ._whole is None  # answered word by word, not loaded whole


def test_after_many_distinct_words_the_table_is_loaded_whole_and_cuts_stay_the_same(
    tmp_path, whole, runs, monkeypatch
):
    monkeypatch.setattr(_jieba_freq, "WHOLE_AFTER", 500)
    lazy = jieba_tokenizer(tmp_path)
    for run in runs:
        assert lazy.lcut(run, HMM=False) == whole.lcut(run, HMM=False), run
    assert lazy.FREQ._whole is not None and len(lazy.FREQ._whole) == len(whole.FREQ)


def test_a_damaged_table_is_built_again(tmp_path, whole):
    jieba_tokenizer(tmp_path)
    path = freq_table_path(tmp_path)
    path.write_bytes(b"not a database" * 100)
    lazy = jieba_tokenizer(tmp_path)
    assert lazy.lcut("光伏电站的发电量", HMM=False) == whole.lcut("光伏电站的发电量", HMM=False)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM f").fetchone()[0] == len(whole.FREQ)


def test_an_unwritable_cache_dir_falls_back_to_jiebas_own_loading(tmp_path, whole):
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")  # a file where the cache directory should be: nothing can be written under it
    lazy = jieba_tokenizer(blocked / "cache")
    assert isinstance(lazy.FREQ, dict) and lazy.lcut("分布式光伏", HMM=False) == whole.lcut(
        "分布式光伏", HMM=False
    )
