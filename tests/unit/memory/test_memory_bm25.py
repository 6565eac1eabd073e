import random

import pytest
from rank_bm25 import BM25Okapi

from memory.bm25 import IncrementalBM25

CORPUS = [
    "光伏 电站 装机 容量 500kw".split(),
    "电价 0.85 元 每 度".split(),
    "payback period of the solar plant is five years".split(),
    "the plant capacity is 500kw and the price is 0.85".split(),
    "杭州 余杭 工商业 光伏 项目".split(),
    "solar solar solar panel".split(),
]


def _assert_equal(index: IncrementalBM25, corpus: list[list[str]], query: list[str]) -> None:
    expected = BM25Okapi(corpus).get_scores(query)
    got = index.scores(query)
    for i, score in enumerate(expected):
        assert got.get(i, 0.0) == pytest.approx(score, abs=1e-9)


@pytest.mark.parametrize(
    "query", [["光伏"], ["solar", "plant"], ["500kw", "0.85", "电价"], ["missing"], ["the"]]
)
def test_scores_equal_rank_bm25(query):
    index = IncrementalBM25()
    for i, doc in enumerate(CORPUS):
        index.add(i, doc)
    _assert_equal(index, CORPUS, query)


def test_incremental_add_and_remove_match_a_rebuilt_rank_bm25():
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(12)]
    docs = {i: [rng.choice(vocab) for _ in range(rng.randint(1, 9))] for i in range(40)}
    index = IncrementalBM25()
    for i, doc in docs.items():
        index.add(i, doc)
    for i in range(0, 40, 3):
        index.remove(i)
        del docs[i]
    index.add(5, ["w1", "w1", "w2"])  # replacing a document keeps the statistics right
    docs[5] = ["w1", "w1", "w2"]
    keys = sorted(docs)
    expected = BM25Okapi([docs[k] for k in keys]).get_scores(["w1", "w3", "w1"])
    got = index.scores(["w1", "w3", "w1"])
    for k, score in zip(keys, expected, strict=True):
        assert got.get(k, 0.0) == pytest.approx(score, abs=1e-9)


def test_top_is_best_first_and_respects_keys():
    index = IncrementalBM25()
    for i, doc in enumerate(CORPUS):
        index.add(i, doc)
    top = index.top(["solar"], 2)
    assert [k for k, _ in top] == [5, 2]
    assert [k for k, _ in index.top(["solar"], 5, keys={2})] == [2]


def test_best_by_group_equals_the_brute_force_maximum_per_group():
    rng = random.Random(11)
    vocab = [f"w{i}" for i in range(6)]  # few terms: most documents match, many ties
    index = IncrementalBM25()
    for i in range(600):
        index.add((f"b{i // 5}", i % 5), [rng.choice(vocab) for _ in range(rng.randint(1, 6))])
    query = ["w1", "w4"]
    brute: dict[str, float] = {}
    for (block, _), score in index.scores(query).items():
        brute[block] = max(score, brute.get(block, float("-inf")))
    for n in (1, 8, 50, 500):
        got = index.best_by(query, n, lambda key: key[0])
        expected = sorted(brute.values(), reverse=True)[:n]
        assert list(got.values()) == pytest.approx(expected)
        assert all(brute[g] == pytest.approx(v) for g, v in got.items())
        assert got == index.best_by(query, n, lambda key: key[0])  # deterministic, ties included


def test_rewriting_documents_many_times_keeps_scores_and_compacts_slots():
    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(8)]
    index = IncrementalBM25()
    docs: dict[int, list[str]] = {}
    for round_ in range(3000):  # like a growing block re-indexed on every message
        key = round_ % 50
        docs[key] = [rng.choice(vocab) for _ in range(rng.randint(1, 7))]
        index.add(key, docs[key])
    assert len(index._keys) < 1200  # dead slots were dropped, not kept for every rewrite
    keys = sorted(docs)
    expected = BM25Okapi([docs[k] for k in keys]).get_scores(["w2", "w5"])
    got = index.scores(["w2", "w5"])
    for k, score in zip(keys, expected, strict=True):
        assert got.get(k, 0.0) == pytest.approx(score, abs=1e-9)
    top = index.top(["w2", "w5"], 3)
    assert [v for _, v in top] == pytest.approx(sorted(got.values(), reverse=True)[:3])


def test_scores_by_position_match_scores_and_survive_removal_and_compaction():
    from memory.bm25 import IncrementalBM25

    index = IncrementalBM25()
    docs = {f"d{i}": [f"w{i % 3}", f"w{i % 5}", "common"] for i in range(40)}
    for i, (key, tokens) in enumerate(docs.items()):
        index.add(key, tokens, position=i)
    for i in range(0, 40, 2):
        index.remove(f"d{i}")
    for i in range(1, 40, 4):
        index.add(f"d{i}", docs[f"d{i}"] + ["extra"], position=i)  # re-added: new slot, same place
    index._compact()
    by_position = index.by_position(["w1", "extra"], 40)
    scores = index.scores(["w1", "extra"])
    for i in range(40):
        expected = scores.get(f"d{i}")
        assert by_position[i] == (max(expected, 1e-3) if expected is not None else 0.0)
