"""OfficeQA scoring: questions about U.S. Treasury Bulletins, mostly answered by a number.

Hard: when the gold answer is a number (commas, currency signs, percent signs and a trailing
unit word such as "million" allowed), some number in the prediction equals it after
rounding to the gold's decimal places; otherwise normalised exact match. Soft: token F1
with thousands separators removed. Explanations use the shared verdict vocabulary.
"""

from __future__ import annotations

import re

from core.environment.contract import Score
from core.environment.verdicts import VERDICT_CORRECT, VERDICT_EMPTY, VERDICT_WRONG
from envs.scoring import normalise_answer, score_answer, shown_text

_NUMBER = re.compile(r"[-−]?\$?\d[\d,]*(?:\.\d+)?")


def _strip_separators(text: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)


def parse_number(text: str) -> tuple[float, int] | None:
    """(value, decimals) when the whole text is one number with optional unit decoration."""
    cleaned = _strip_separators(text.strip()).replace("−", "-")
    cleaned = re.sub(
        r"^[~≈]|[$%]|\b(?:million|billion|thousand|percent|dollars?)\b", "", cleaned, flags=re.I
    )
    cleaned = cleaned.strip().rstrip(".")
    if not re.fullmatch(r"-?\d+(?:\.\d+)?", cleaned.replace(" ", "")):
        return None
    cleaned = cleaned.replace(" ", "")
    decimals = len(cleaned.split(".")[1]) if "." in cleaned else 0
    return float(cleaned), decimals


def numbers_in(text: str) -> list[float]:
    out = []
    for match in _NUMBER.findall(_strip_separators(text).replace("−", "-")):
        try:
            out.append(float(match.replace("$", "").replace(",", "")))
        except ValueError:
            continue
    return out


def score_officeqa(prediction: str, gold: str) -> Score:
    number = parse_number(gold)
    text_score = score_answer(_strip_separators(prediction), _strip_separators(gold))
    if number is None:
        return text_score
    value, decimals = number
    hard = (
        1.0
        if any(round(n, decimals) == round(value, decimals) for n in numbers_in(prediction))
        else 0.0
    )
    verdict = (
        VERDICT_CORRECT if hard else (VERDICT_EMPTY if not prediction.strip() else VERDICT_WRONG)
    )
    soft = max(hard, text_score.soft) if normalise_answer(prediction) else 0.0
    explanation = (
        f'expected "{shown_text(gold)}"; got "{shown_text(prediction)}" — verdict: {verdict} '
        f"(numeric match to {decimals} decimal places); exact match {int(hard)}; token F1 {soft:.2f}"
    )
    return Score(hard=hard, soft=soft, explanation=explanation)
