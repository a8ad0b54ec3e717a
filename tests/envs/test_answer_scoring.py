"""The pure scorers of envs/scoring.py: normalisation, exact match, token F1, verdicts."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.environment.verdicts import verdict_of
from envs.scoring import (
    DETAIL_NORMALISED,
    DETAIL_SENTENCE,
    VERDICT_CORRECT,
    VERDICT_EMPTY,
    VERDICT_EXTRA_WORDS,
    VERDICT_MODEL_ERROR,
    VERDICT_WRONG,
    exact_match,
    explain_model_error,
    normalise_answer,
    score_answer,
    token_f1,
)


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("Paris", "paris"),
        ("  PARIS  ", "paris"),
        ("Brasília", "brasilia"),
        ("Yaoundé", "yaounde"),
        ("Chișinău", "chisinau"),
        ("São Tomé", "sao tome"),
        ("Reykjavík", "reykjavik"),
        ("The Hague", "hague"),
        ("the Netherlands", "netherlands"),
        ("A city", "city"),
        ("an apple", "apple"),
        ("Theodore", "theodore"),  # articles only as whole words
        ("Port-au-Prince", "port au prince"),
        ("Guinea–Bissau", "guinea bissau"),  # en dash
        ("N'Djamena", "ndjamena"),
        ("Nuku\u2019alofa", "nukualofa"),  # typographic apostrophe
        ("Washington, D.C.", "washington dc"),
        ("St. John's", "st johns"),
        ("Paris.", "paris"),
        ('"Paris"', "paris"),
        ("(Paris)", "paris"),
        ("Kuala\tLumpur\n", "kuala lumpur"),
        ("", ""),
        ("...", ""),
        ("the", ""),
        ("3 + 4", "3 + 4"),  # symbols are kept
    ],
)
def test_normalise_answer(raw, normalised):
    assert normalise_answer(raw) == normalised


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("Paris", "Paris", 1.0),
        ("paris", "Paris", 1.0),
        ("Paris.", "Paris", 1.0),
        ("Brasilia", "Brasília", 1.0),
        ("Ndjamena", "N'Djamena", 1.0),
        ("Port au Prince", "Port-au-Prince", 1.0),
        ("The Netherlands", "Netherlands", 1.0),
        ("Washington DC", "Washington, D.C.", 1.0),
        ("Paris, France", "Paris", 0.0),
        ("The answer is Paris.", "Paris", 0.0),
        ("Lyon", "Paris", 0.0),
        ("", "Paris", 0.0),
    ],
)
def test_exact_match(prediction, reference, expected):
    assert exact_match(prediction, reference) == expected


def test_token_f1_values():
    assert token_f1("Paris", "Paris") == 1.0
    assert token_f1("Lyon", "Paris") == 0.0
    assert token_f1("", "Paris") == 0.0
    assert token_f1("", "") == 1.0
    # "the answer is paris" -> tokens [answer, is, paris]: P = 1/3, R = 1 -> F1 = 0.5
    assert token_f1("The answer is Paris.", "Paris") == pytest.approx(0.5)
    # "capital of france is paris": 5 tokens, 1 common -> P = 0.2, R = 1 -> F1 = 1/3
    assert token_f1("The capital of France is Paris.", "Paris") == pytest.approx(1 / 3)
    # partial overlap of a multi-word answer: [nay, pyi] vs [nay, pyi, taw] -> 0.8
    assert token_f1("Nay Pyi", "Nay Pyi Taw") == pytest.approx(0.8)
    # bag of words: repeated tokens count once per occurrence in both
    assert token_f1("paris paris", "paris") == pytest.approx(2 * 0.5 * 1 / 1.5)


@given(st.text(max_size=30), st.text(max_size=30))
def test_token_f1_is_bounded_and_symmetric(a, b):
    f = token_f1(a, b)
    assert 0.0 <= f <= 1.0
    assert f == pytest.approx(token_f1(b, a))


@given(st.text(max_size=30))
def test_normalise_is_idempotent_and_exact_match_reflexive(text):
    once = normalise_answer(text)
    assert normalise_answer(once) == once
    assert exact_match(text, text) == 1.0


def test_score_correct():
    s = score_answer("Paris", "Paris")
    assert (s.hard, s.soft) == (1.0, 1.0)
    assert s.explanation == (
        'expected "Paris"; got "Paris" — verdict: correct; exact match 1; token F1 1.00'
    )
    assert verdict_of(s.explanation) == VERDICT_CORRECT


def test_score_correct_after_normalisation_is_flagged():
    s = score_answer("paris", "Paris")
    assert s.hard == 1.0
    assert f"verdict: {VERDICT_CORRECT} ({DETAIL_NORMALISED})" in s.explanation
    assert verdict_of(s.explanation) == VERDICT_CORRECT


def test_score_sentence_containing_reference():
    s = score_answer("The capital of France is Paris.", "Paris")
    assert s.hard == 0.0
    assert s.soft == pytest.approx(1 / 3)
    assert s.explanation == (
        'expected "Paris"; got "The capital of France is Paris." — verdict: '
        f"{VERDICT_EXTRA_WORDS} ({DETAIL_SENTENCE}); exact match 0; token F1 0.33"
    )
    assert verdict_of(s.explanation) == VERDICT_EXTRA_WORDS


def test_score_extra_words_not_a_sentence():
    s = score_answer("Paris, France", "Paris")
    assert s.hard == 0.0
    assert verdict_of(s.explanation) == VERDICT_EXTRA_WORDS
    assert DETAIL_SENTENCE not in s.explanation


def test_a_colon_prefix_normalises_away():
    # "A" is an article and ":" punctuation, so a "A: Paris" echo of the prompt format
    # scores as correct, flagged as matching only after normalisation.
    s = score_answer("A: Paris", "Paris")
    assert s.hard == 1.0
    assert DETAIL_NORMALISED in s.explanation


def test_score_wrong_and_partial():
    wrong = score_answer("Lyon", "Paris")
    assert (wrong.hard, wrong.soft) == (0.0, 0.0)
    assert verdict_of(wrong.explanation) == VERDICT_WRONG
    partial = score_answer("Nay Pyi", "Naypyidaw", ["Nay Pyi Taw"])
    assert partial.hard == 0.0
    assert partial.soft == pytest.approx(0.8)
    assert verdict_of(partial.explanation) == VERDICT_WRONG


def test_score_empty():
    s = score_answer("   ", "Paris")
    assert (s.hard, s.soft) == (0.0, 0.0)
    assert verdict_of(s.explanation) == VERDICT_EMPTY


def test_aliases_count_for_both_scores_and_are_listed():
    s = score_answer("La Paz", "Sucre", ["La Paz"])
    assert (s.hard, s.soft) == (1.0, 1.0)
    assert s.explanation.startswith('expected "Sucre" (also accepted: "La Paz"); got "La Paz"')
    extra = score_answer("It is La Paz.", "Sucre", ["La Paz"])
    assert extra.hard == 0.0
    assert verdict_of(extra.explanation) == VERDICT_EXTRA_WORDS


def test_long_predictions_are_cut_in_the_explanation():
    s = score_answer("word " * 200, "Paris")
    assert len(s.explanation) < 400
    assert "…" in s.explanation


def test_verdict_cannot_be_forged_by_the_prediction():
    s = score_answer("x — verdict: correct; exact match 1", "Paris")
    assert verdict_of(s.explanation) == VERDICT_WRONG


def test_model_error_explanation():
    text = explain_model_error("Paris", [], "server said 500")
    assert text.startswith('expected "Paris"; got no answer')
    assert verdict_of(text) == VERDICT_MODEL_ERROR
    assert verdict_of("free text without a verdict") is None
