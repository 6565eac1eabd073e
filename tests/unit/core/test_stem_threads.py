"""Routing's English stemmer is shared by the server's turn threads: stemming must be thread-safe."""

from __future__ import annotations

import random
import string
import sys
from concurrent.futures import ThreadPoolExecutor

from nodes import routing


def test_stemming_from_many_threads_at_once_matches_stemming_alone() -> None:
    rng = random.Random(7)
    suffixes = ["ational", "ization", "fulness", "iveness", "ing", "edly", "ments", "ously"]
    words = sorted(
        {
            "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) + rng.choice(suffixes)
            for _ in range(6000)
        }
    )
    routing._stem.cache_clear()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows at once
    try:
        with ThreadPoolExecutor(8) as pool:
            together = list(pool.map(routing._stem, words * 2))
    finally:
        sys.setswitchinterval(interval)
    routing._stem.cache_clear()
    alone = [routing._stem(w) for w in words]
    assert together == alone * 2
