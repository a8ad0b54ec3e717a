"""Reading a final answer out of a reply that was asked to put it in `<answer>...</answer>`."""

from __future__ import annotations

import re

_CLOSED = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(r"<answer>", re.IGNORECASE)


def extract_answer(reply: str, *, untagged: str = "whole") -> tuple[str, bool]:
    """(answer, tagged). The last closed tag wins; an unclosed last tag (generation stopped
    at a newline or the token cap) gives the text after it; with no tag at all the whole
    reply is the answer (`untagged` "whole"), so a terse correct reply still scores, or its
    last non-empty line ("last_line", the published SearchQA harness: a reply that reasons
    step by step ends with its answer); tagged is then False."""
    closed = _CLOSED.findall(reply)
    if closed:
        return closed[-1].strip(), True
    opened = list(_OPEN.finditer(reply))
    if opened:
        return reply[opened[-1].end() :].strip(), True
    if untagged == "last_line":
        lines = [line.strip() for line in reply.splitlines() if line.strip()]
        return (lines[-1] if lines else ""), False
    return reply.strip(), False
