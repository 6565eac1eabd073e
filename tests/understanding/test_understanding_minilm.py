"""Routing that needs the knowledge base's own judgement, with the default MiniLM embeddings.

When no agent's words match a request, or a question fits the calculation's words and the
knowledge base's titles alike, the planner asks the knowledge agent (`AgentSpec.serves`) whether
its documents answer it: an English question close in meaning to a note's English summary does,
an HR question sharing common words with the notes does not.
"""

from __future__ import annotations

import pytest
from test_understanding import CASES, assert_right, bench

ROUTED = [
    "fresh-kn-en-2",  # "How fast do solar panels lose output over the years?": no title word; the summary
    "fresh-kn-en-1",  # "What documents do I need to register a rooftop solar project?": calc words too
    "fresh-oos-5",  # "公司年假怎么休": shares 公司/年 with the notes, answered as out of scope
    "oos-zh-02",  # "公司年假政策是怎么规定的": likewise
]


@pytest.mark.slow
@pytest.mark.parametrize("case_id", ROUTED)
def test_the_knowledge_base_decides_what_words_cannot(case_id, data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PLANGRAPH_EMBEDDINGS", "minilm")
    case = CASES[case_id]
    assert_right(case, bench.run_case(case, tmp_path / "runs"), ("plan", "params", "language"))
