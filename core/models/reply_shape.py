"""Checks on a success reply's body before it becomes a `Completion`.

The SDKs build their response objects without validating them, so an HTTP 200 from a
misbehaving server (a proxy's HTML page, `{}`, a text block whose text is a number, a
token count of "many" or -5) reaches us as whatever it was. Such a reply is not an
answer: it raises a TransientError naming what was wrong ("malformed response body: ..."),
so the retry policy asks again and, failing that, the call is a model error. Nothing that
fails here is ever cached, counted as negative spend, or scored.
"""

from __future__ import annotations

import math
from typing import Any

from core.models.types import TransientError


def malformed(what: str) -> TransientError:
    return TransientError(f"malformed response body: {what}")


def token_count(value: Any, name: str) -> int:
    """A usage field: absent is 0; otherwise a finite, non-negative number."""
    if value is None:
        return 0
    number_like = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number_like or not math.isfinite(value) or value < 0:
        raise malformed(f"usage {name} is {str(value)[:40]!r}, not a token count")
    return int(value)


def anthropic_text(blocks: Any) -> str:
    """The text of a message's content blocks (thinking and tool blocks are not the
    answer); a content that is not a list of blocks, or a text block whose text is not
    text, is malformed."""
    if not isinstance(blocks, list):
        raise malformed("content is not a list of blocks")
    parts = []
    for block in blocks:
        if getattr(block, "type", None) != "text":
            continue
        text = getattr(block, "text", None)
        if text is not None and not isinstance(text, str):
            raise malformed("a text block's text is not text")
        parts.append(text or "")
    return "".join(parts)
