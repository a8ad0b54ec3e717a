"""ANLS, the DocVQA metric: average normalised Levenshtein similarity with threshold 0.5.

For one gold: NL = edit distance / max(length) over the lowercased, whitespace-collapsed
strings; the similarity is 1 - NL when NL < 0.5, else 0 (a reading that is mostly wrong
earns nothing). An item's score is the best over its golds.
"""

from __future__ import annotations

from collections.abc import Sequence

THRESHOLD = 0.5


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def anls(prediction: str, golds: Sequence[str], threshold: float = THRESHOLD) -> float:
    pred = _norm(prediction)
    best = 0.0
    for gold in golds:
        ref = _norm(gold)
        longest = max(len(pred), len(ref))
        if longest == 0:
            best = max(best, 1.0)
            continue
        distance = levenshtein(pred, ref) / longest
        best = max(best, 1.0 - distance if distance < threshold else 0.0)
    return best
