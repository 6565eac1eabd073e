"""A model-written block gist is asked within the token budget however long the block."""

from __future__ import annotations

from nodes.remember import SUMMARY_PROMPT, _gist
from tests.support.openai_server import ScriptedOpenAIServer, prompt_tokens, reply_text


def test_a_long_block_is_cut_to_the_budget_before_the_gist_call():
    block = "用户：杭州余杭区500kW工商业屋顶光伏的测算参数和结论如下。" * 200  # ~5,000 CJK tokens
    with ScriptedOpenAIServer([reply_text("杭州500kW测算结论")]) as server:
        assert _gist(server.chat_model(), block, 2000) == "杭州500kW测算结论"
    messages = server.requests[0]["messages"]
    assert messages[0]["content"] == SUMMARY_PROMPT and block.startswith(messages[1]["content"])
    assert 1500 < prompt_tokens(messages) <= 2000
