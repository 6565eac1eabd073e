"""Checks of a JSON request body before LangServe sees it: each problem is a 422 that names it.

Without them, bodies that are not UTF-8, hold a lone surrogate, a 5,000-digit integer, JSON nested
1,000 deep, `messages` as an object or batch inputs like `"x"` / `[null]` failed deep inside
LangServe or the graph with a 500.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "BodyError", "batch_size", "check_body"]

MAX_DEPTH = 64
MAX_INT_DIGITS = 40
_TURN_ENDPOINTS = ("/invoke", "/stream", "/stream_events", "/stream_log")


class BodyError(ValueError):
    """The request body cannot be used; the message says why and what to send instead."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BodyError(f"an integer with {len(text)} digits (at most {MAX_INT_DIGITS}); send it as a string")
    return int(text)


def _walk(value: Any) -> None:
    """Depth and strings of a parsed body: nested at most MAX_DEPTH, no lone surrogates."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BodyError(f"JSON nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise BodyError(
                    r"a string with a lone surrogate (such as \ud800); send valid Unicode"
                ) from None
        elif isinstance(item, dict):
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def _turn_input(value: Any, where: str) -> None:
    """One turn's input: an object with `messages` (a non-empty list of message objects) or `resume`."""
    if not isinstance(value, dict):
        raise BodyError(f'{where} must be an object: {{"messages": [...]}} or {{"resume": ...}}')
    if "messages" in value:
        messages = value["messages"]
        if not isinstance(messages, list) or not messages:
            raise BodyError(
                f'{where}.messages must be a non-empty list of {{"role": "user", "content": "..."}}'
            )
        for n, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("content"), str | list):
                raise BodyError(f'{where}.messages[{n}] must be an object with "content" text')


def check_body(path: str, raw: bytes) -> Any:
    """The parsed body of a POST to a LangServe route; BodyError when it cannot be used."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BodyError(
            f"the body is not valid UTF-8 (byte {error.start}); send UTF-8 encoded JSON"
        ) from None
    try:
        body = json.loads(text, parse_int=_int) if text.strip() else None
    except RecursionError:
        raise BodyError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as error:
        raise BodyError(
            f"the body is not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    _walk(body)
    if not isinstance(body, dict):
        return body  # LangServe answers a missing or non-object body itself (422)
    if path.endswith("/batch"):
        inputs = body.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise BodyError('"inputs" must be a non-empty list of turn inputs')
        for n, item in enumerate(inputs):
            _turn_input(item, f"inputs[{n}]")
    elif path.endswith(_TURN_ENDPOINTS) and "input" in body:
        _turn_input(body["input"], "input")
    return body


def batch_size(body: Any) -> int:
    """How many turns a parsed body asks for (a batch counts each of its inputs)."""
    if isinstance(body, dict) and isinstance(body.get("inputs"), list):
        return len(body["inputs"])
    return 1
