"""A harvested prompt is capped before it is redacted and kept: a pasted log of 15 MB is
not a task a night can replay, and redacting it whole costs seconds a megabyte of
secret-dense text (the harvest redacts every prompt, a Codex prompt twice).

Only the first `MAX_PROMPT_CHARS` are kept, with a note saying how long the prompt was
(and the task is marked `truncated`). The redactor sees `REDACT_MARGIN` more characters
than are kept, so a secret that straddles the cut is still matched whole and replaced
before the cut: no fragment of a secret survives at the end. The cut never falls inside a
`[REDACTED:…]` mark.
"""

from __future__ import annotations

from sleep.redact import Redacted, Redactor

MAX_PROMPT_CHARS = 32_000  # the miner reads 16,000 of them (sleep/mine/heuristic.py)
REDACT_MARGIN = 4_096  # far above the longest secret a rule matches but a private key


def cut_note(length: int) -> str:
    return f"\n[prompt cut: the first {MAX_PROMPT_CHARS:,} of {length:,} characters]"


def redact_capped(redactor: Redactor, text: str) -> tuple[Redacted, bool]:
    """(the redacted text, whether it was cut)."""
    if len(text) <= MAX_PROMPT_CHARS:
        return redactor.redact(text), False
    redacted = redactor.redact(text[: MAX_PROMPT_CHARS + REDACT_MARGIN])
    cut = MAX_PROMPT_CHARS
    mark = redacted.text.rfind("[REDACTED:", 0, cut + len("[REDACTED:") - 1)
    if mark >= 0 and redacted.text.find("]", mark) >= cut:
        cut = mark  # never half a mark
    kept = redacted.text[:cut]
    return Redacted(kept + cut_note(len(text)), redacted.findings), True
