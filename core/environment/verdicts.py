"""The explanation vocabulary an environment and the engine share.

An environment's explanation of a score (what the optimizer reads) has one stable shape:

    expected "<reference>"[ (also accepted: "<alias>", ...)]; got "<prediction>" —
    verdict: <VERDICT>[ (<detail>)]; exact match <0|1>; token F1 <0.00>

<VERDICT> is exactly one of the phrases below. The engine's non-LLM `fewshot` strategy
derives its format rules from them, so they belong to the contract, not to any one
environment: change them only with a version bump of every environment that writes them.
"""

from __future__ import annotations

import re

# The verdict phrases: part of the explanation contract, change them only with a version bump.
VERDICT_CORRECT = "correct"
VERDICT_EXTRA_WORDS = "contains the reference with extra words"
VERDICT_WRONG = "wrong answer"
VERDICT_EMPTY = "empty answer"
VERDICT_MODEL_ERROR = "model error"
VERDICTS = (VERDICT_CORRECT, VERDICT_EXTRA_WORDS, VERDICT_WRONG, VERDICT_EMPTY, VERDICT_MODEL_ERROR)

# Details that may follow a verdict in parentheses (informative, not part of the verdict).
DETAIL_SENTENCE = "the answer is a sentence"
DETAIL_NORMALISED = "matches only after normalising case, accents or punctuation"

_VERDICT_RE = re.compile(r" — verdict: (" + "|".join(re.escape(v) for v in VERDICTS) + r")[ ;]")


def verdict_of(explanation: str) -> str | None:
    """The verdict phrase in an explanation of the documented shape, else None."""
    # The last match: a prediction quoted earlier in the line cannot forge the verdict.
    matches = _VERDICT_RE.findall(explanation + " ")
    return matches[-1] if matches else None
