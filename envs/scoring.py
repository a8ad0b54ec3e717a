"""Pure answer scorers shared by the short-answer environments (capitals, searchqa, officeqa,
bigbench): normalised exact match (hard), token F1 (soft), and the explanation the
optimizer reads. Every scorer takes the normaliser as a parameter: `normalise_answer` (ours,
below) by default, `squad_normalise` where a benchmark publishes SQuAD's.

Normalisation (`normalise_answer`), in this order: Unicode accents folded (NFKD, combining
marks dropped: "Brasília" -> "brasilia"); lowercased; hyphens, dashes and slashes become
spaces ("Port-au-Prince" == "Port au Prince"); every other punctuation character is
removed ("N'Djamena" == "Ndjamena", "Washington, D.C." == "Washington DC"); the English
articles "a", "an", "the" are dropped as whole words; whitespace is collapsed.

The explanation has one stable shape, so that the optimizer (and the non-LLM `fewshot`
strategy, which derives a format rule from it) can rely on it:

    expected "<reference>"[ (also accepted: "<alias>", ...)]; got "<prediction>" —
    verdict: <VERDICT>[ (<detail>)]; exact match <0|1>; token F1 <0.00>

(one line; the prediction is whitespace-collapsed and cut at 200 characters). <VERDICT> is
exactly one of the phrases of `core.environment.verdicts`, whose `verdict_of` reads it back.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

from core.environment.contract import Score
from core.environment.verdicts import (
    DETAIL_NORMALISED,
    DETAIL_SENTENCE,
    VERDICT_CORRECT,
    VERDICT_EMPTY,
    VERDICT_EXTRA_WORDS,
    VERDICT_MODEL_ERROR,
    VERDICT_WRONG,
)

ARTICLES = frozenset({"a", "an", "the"})
_SPACE_PUNCT = re.compile(r"[-\u2010-\u2015/\\_]")
MAX_SHOWN_CHARS = 200


def _fold_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalise_answer(text: str) -> str:
    """The canonical comparison form of a short answer (see the module docstring)."""
    text = _fold_accents(text).lower()
    text = _SPACE_PUNCT.sub(" ", text)
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    # Symbols (e.g. "+", "$") are kept: they can carry meaning in other environments.
    words = [w for w in text.split() if w not in ARTICLES]
    return " ".join(words)


Normaliser = Callable[[str], str]

_SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCT = frozenset(string.punctuation)


def squad_normalise(text: str) -> str:
    """SQuAD's answer normalisation, as its evaluation script defines it: lowercase, drop
    ASCII punctuation, drop the articles a/an/the, collapse whitespace. Unlike
    `normalise_answer` it keeps accents ("Brasília" != "Brasilia") and joins hyphenated
    words ("Port-au-Prince" -> "portauprince"): benchmark numbers stay comparable."""
    text = "".join(ch for ch in text.lower() if ch not in _ASCII_PUNCT)
    return " ".join(_SQUAD_ARTICLES.sub(" ", text).split())


def answer_tokens(text: str, normalise: Normaliser = normalise_answer) -> list[str]:
    return normalise(text).split()


def exact_match(prediction: str, reference: str, normalise: Normaliser = normalise_answer) -> float:
    """1.0 if the normalised forms are equal, else 0.0."""
    return 1.0 if normalise(prediction) == normalise(reference) else 0.0


def token_f1(prediction: str, reference: str, normalise: Normaliser = normalise_answer) -> float:
    """Harmonic mean of token precision and recall over normalised tokens (bag of words).
    Two empty answers agree (1.0); one empty answer scores 0.0."""
    pred, ref = answer_tokens(prediction, normalise), answer_tokens(reference, normalise)
    if not pred or not ref:
        return 1.0 if pred == ref else 0.0
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def contains_phrase(haystack: list[str], needle: list[str]) -> bool:
    """Whether the token list `needle` occurs as a contiguous run in `haystack`."""
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def _looks_like_sentence(prediction: str) -> bool:
    return len(prediction.split()) >= 3 and prediction.rstrip().endswith((".", "!", "?"))


def shown_text(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def _expected(reference: str, aliases: Sequence[str]) -> str:
    out = f'expected "{shown_text(reference)}"'
    if aliases:
        out += " (also accepted: " + ", ".join(f'"{shown_text(a)}"' for a in aliases) + ")"
    return out


def score_answer(
    prediction: str,
    reference: str,
    aliases: Sequence[str] = (),
    *,
    normalise: Normaliser = normalise_answer,
) -> Score:
    """Hard = best exact match over reference and aliases; soft = best token F1 over them;
    explanation in the documented shape, with the verdict for the best-matching answer."""
    accepted = [reference, *aliases]
    hard = max(exact_match(prediction, a, normalise) for a in accepted)
    soft = max(token_f1(prediction, a, normalise) for a in accepted)
    pred_tokens = answer_tokens(prediction, normalise)
    detail = ""
    if hard == 1.0:
        verdict = VERDICT_CORRECT
        if prediction.strip() not in accepted:
            detail = DETAIL_NORMALISED
    elif not pred_tokens:
        verdict = VERDICT_EMPTY
    elif any(contains_phrase(pred_tokens, answer_tokens(a, normalise)) for a in accepted):
        verdict = VERDICT_EXTRA_WORDS
        if _looks_like_sentence(prediction):
            detail = DETAIL_SENTENCE
    else:
        verdict = VERDICT_WRONG
    shown_verdict = f"{verdict} ({detail})" if detail else verdict
    explanation = (
        f'{_expected(reference, aliases)}; got "{shown_text(prediction)}" — '
        f"verdict: {shown_verdict}; exact match {int(hard)}; token F1 {soft:.2f}"
    )
    return Score(hard=hard, soft=soft, explanation=explanation)


def explain_model_error(reference: str, aliases: Sequence[str], error: str) -> str:
    """The explanation of a rollout that scored zero because the model call failed."""
    return (
        f"{_expected(reference, aliases)}; got no answer — verdict: {VERDICT_MODEL_ERROR}; "
        f"{shown_text(error)}"
    )


def score_label(prediction: str, chosen: str | None, reference: str, how: str) -> Score:
    """A multiple-choice answer read as the label `chosen` (None: no label could be read)
    by the rule named in `how`; hard = soft = 1 when it is the reference label."""
    hard = 1.0 if chosen is not None and chosen == reference else 0.0
    if hard:
        verdict = VERDICT_CORRECT
    elif not prediction.strip():
        verdict = VERDICT_EMPTY
    else:
        verdict = VERDICT_WRONG
    read = f"read as {chosen} by {how}" if chosen is not None else "no choice label found"
    explanation = (
        f'expected "{reference}"; got "{shown_text(prediction)}" — verdict: {verdict} ({read}); '
        f"exact match {int(hard)}; token F1 {hard:.2f}"
    )
    return Score(hard=hard, soft=hard, explanation=explanation)
