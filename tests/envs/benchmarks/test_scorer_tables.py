"""Table-driven scorer cases: unicode, punctuation, articles, multiple golds, numbers, dates."""

import datetime

import pytest

from core.environment.verdicts import VERDICT_CORRECT, VERDICT_EMPTY, VERDICT_WRONG, verdict_of
from envs.docvqa.anls import anls, levenshtein
from envs.livemath.choices import read_choice, shuffle_choices
from envs.officeqa.scoring import parse_number, score_officeqa
from envs.scoring import squad_normalise
from envs.searchqa.environment import score_prediction as searchqa_score
from envs.spreadsheetbench.compare import cell_names, cells_equal, parse_positions


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Beatles", "beatles"),  # article
        ("an Apple, a day", "apple day"),  # articles and a comma
        ("  U.S.A.  ", "usa"),  # punctuation, spaces
        ("Port-au-Prince", "portauprince"),  # SQuAD joins hyphenated words
        ("Brasília", "brasília"),  # accents are kept (SQuAD does not fold them)
        ("Théâtre’s", "théâtre’s"),  # non-ASCII punctuation is kept too
        ("1,000", "1000"),
        ("theatre", "theatre"),  # "the" only as a whole word
    ],
)
def test_squad_normalisation(text, normalised):
    assert squad_normalise(text) == normalised


@pytest.mark.parametrize(
    ("prediction", "golds", "hard", "soft"),
    [
        ("Paris", ["Paris"], 1.0, 1.0),
        ("the paris!", ["Paris"], 1.0, 1.0),
        ("Lutetia", ["Paris", "Lutetia"], 1.0, 1.0),  # max over golds
        ("George Washington Carver", ["George Washington"], 0.0, 0.8),
        ("", ["Paris"], 0.0, 0.0),
        ("Brasilia", ["Brasília"], 0.0, 0.0),  # SQuAD: no accent folding
    ],
)
def test_searchqa_em_and_f1_take_the_best_gold(prediction, golds, hard, soft):
    score = searchqa_score(prediction, golds)
    assert (score.hard, round(score.soft, 2)) == (hard, soft)
    expected = VERDICT_CORRECT if hard else (VERDICT_EMPTY if not prediction else None)
    if expected:
        assert verdict_of(score.explanation) == expected


@pytest.mark.parametrize(
    ("prediction", "golds", "value"),
    [
        ("Coca-Cola", ["coca-cola"], 1.0),  # case and spacing only
        ("Coca Cola", ["coca-cola"], 0.89),  # one edit in nine characters
        ("cola", ["coca-cola"], 0.0),  # NL 0.56 >= 0.5: nothing
        ("1995", ["1996", "1995"], 1.0),  # max over golds
        ("", ["x"], 0.0),
    ],
)
def test_anls(prediction, golds, value):
    assert round(anls(prediction, golds), 2) == value


def test_levenshtein():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3


@pytest.mark.parametrize(
    ("prediction", "gold", "hard"),
    [
        ("$2,345.6 million", "2345.6", 1.0),  # commas, currency, unit word
        ("The total was 2,345.61", "2,345.6", 1.0),  # rounded to the gold's decimals
        ("about 2346", "2345.6", 0.0),
        ("12.5%", "12.5 percent", 1.0),
        ("−3", "-3", 1.0),  # unicode minus
        ("March 1944", "March 1944", 1.0),  # a date: falls back to text match
        ("in the 1943 bulletin", "1944", 0.0),
    ],
)
def test_officeqa_numbers_units_commas(prediction, gold, hard):
    assert score_officeqa(prediction, gold).hard == hard


def test_officeqa_parse_number():
    assert parse_number("$1,234.50") == (1234.5, 2)
    assert parse_number("Treasury") is None


CHOICES = [
    {"label": "A", "text": "x = 1"},
    {"label": "B", "text": "x = 2"},
    {"label": "C", "text": "no solution"},
]


@pytest.mark.parametrize(
    ("reply", "label", "rule"),
    [
        ("<answer>B</answer>", "B", "the answer tag"),
        ("<answer>(c)</answer>", "C", "the answer tag"),
        ("<answer>No solution.</answer>", "C", "the exact choice text"),
        ("x = 2", "B", "the exact choice text"),
        ("A. because ...", "A", "the first token"),
        ("I think so", None, "no rule"),
        ("<answer>Z</answer>", None, "no rule"),
    ],
)
def test_livemath_label_cascade(reply, label, rule):
    assert read_choice(reply, CHOICES) == (label, rule)


def test_livemath_shuffle_is_seeded_per_item_and_keeps_the_answer():
    first = shuffle_choices("202511:1", CHOICES, "B", 42)
    assert shuffle_choices("202511:1", CHOICES, "B", 42) == first
    choices, correct = first
    assert [c["label"] for c in choices] == ["A", "B", "C"]
    assert next(c["text"] for c in choices if c["label"] == correct) == "x = 2"
    orders = {
        tuple(c["text"] for c in shuffle_choices(f"m:{n}", CHOICES, "B", 42)[0]) for n in range(20)
    }
    assert len(orders) > 1  # the order depends on the item


@pytest.mark.parametrize(
    ("gold", "pred", "equal"),
    [
        (3, 3.0, True),
        (3.14159, "3.14", True),  # numbers (and numeric strings) to 2 decimals
        (3.14159, 3.15, False),
        ("", None, True),  # empty string equals empty cell
        (None, None, True),
        ("3", "three", False),
        (1, "1", True),  # a numeric string becomes a number
        ("abc", "ABC", False),  # text is compared exactly
        (datetime.datetime(2024, 1, 2, 13, 0), datetime.datetime(2024, 1, 2, 9, 0), False),
        (datetime.datetime(2024, 1, 2), 45293, True),  # Excel day number of 2024-01-02
        (datetime.time(9, 30, 0, 5), datetime.time(9, 30, 0, 7), True),
        (True, 1, True),
    ],
)
def test_spreadsheet_cells_compare_by_the_published_rules(gold, pred, equal):
    assert cells_equal(gold, pred) is equal


def test_spreadsheet_ranges():
    assert cell_names("A1:B2") == ["A1", "A2", "B1", "B2"]
    assert cell_names("C3") == ["C3"]
    assert parse_positions("'My sheet'!A1:A2,B5", "Sheet1") == [
        ("My sheet", "A1:A2"),
        ("Sheet1", "B5"),
    ]
    with pytest.raises(ValueError):
        cell_names("A1:B")


def test_verdicts_of_wrong_answers():
    assert verdict_of(searchqa_score("Rome", ["Paris"]).explanation) == VERDICT_WRONG
    assert verdict_of(score_officeqa("7", "8").explanation) == VERDICT_WRONG
