"""The recall benchmark's conversation generator: deterministic, split by seed, evidence that exists."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest

from bench.memory_convgen import conversation, conversations
from memory.tokens import count_messages_tokens


def _dump(conv):
    return (
        [
            (m.id, type(m).__name__, m.name, m.content, m.additional_kwargs["created_at"])
            for m in conv.messages
        ],
        [(q.text, q.evidence, q.kind) for q in conv.questions],
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_same_seed_same_conversation_other_seed_other_one(lang):
    assert _dump(conversation(lang, 3)) == _dump(conversation(lang, 3))
    assert _dump(conversation(lang, 3)) != _dump(conversation(lang, 4))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_long_multi_session_with_every_question_kind_and_real_evidence(lang):
    conv = conversation(lang, 0)
    ids = [str(m.id) for m in conv.messages]
    assert len(set(ids)) == len(ids)
    assert 15_000 <= count_messages_tokens(conv.messages) <= 30_000
    days = {datetime.fromisoformat(m.additional_kwargs["created_at"]).date() for m in conv.messages}
    assert len(days) >= 20
    times = [m.additional_kwargs["created_at"] for m in conv.messages]
    assert times == sorted(times)
    assert set(Counter(q.kind for q in conv.questions)) == {
        "single",
        "multi_hop",
        "multi_session",
        "temporal",
        "paraphrase",
    }
    for q in conv.questions:
        assert q.evidence and set(q.evidence) <= set(ids)
    spread = [q for q in conv.questions if q.kind == "multi_session"]
    by_id = {str(m.id): m for m in conv.messages}
    assert any(
        len({by_id[e].additional_kwargs["created_at"][:10] for e in q.evidence}) > 1 for q in spread
    )  # evidence in several sessions


def test_dev_and_test_splits_never_share_a_conversation():
    dev = {tuple(str(m.content) for m in c.messages) for c in conversations("en", "dev", 3)}
    test = {tuple(str(m.content) for m in c.messages) for c in conversations("en", "test", 3)}
    assert len(dev) == len(test) == 3 and not dev & test
    assert [c.seed for c in conversations("zh", "test", 2)] == [1000, 1001]
    with pytest.raises(ValueError, match="dev"):
        conversations("en", "train", 1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paraphrase_questions_share_no_word_with_their_answer_and_version_1_is_the_first_generator(lang):
    from memory.text import search_terms

    conv = conversation(lang, 0)
    by_id = {str(m.id): str(m.content) for m in conv.messages}
    names = {str(m.name).lower() for m in conv.messages}
    para = [q for q in conv.questions if q.kind == "paraphrase"]
    assert len(para) >= 6
    for q in para:
        asked = set(search_terms(q.text)) - names
        said = {t for e in q.evidence for t in search_terms(by_id[e])}
        assert not asked & said - {"叫"}, q.text  # 叫 ("called") is the one word Chinese shares
    first = conversation(lang, 0, version=1)
    assert "paraphrase" not in {q.kind for q in first.questions}
    assert len({str(m.content) for m in first.messages} & set(by_id.values())) < len(first.messages) / 2
