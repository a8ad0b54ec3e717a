"""Precision first (issue 37, round 6): a follow-up that asks for more work on what was
just made, a new question about how the code would behave, or a constraint sentence before
a new request is a request of its own, never swallowed as a correction of the request
before it (sleep/mine/follow_up.py). Generic wordings written for this test, beside the
ledger corpus's (a development corpus since this round); the corrections they look like
still attach."""

from __future__ import annotations

import pytest

from sleep.mine.follow_up import Before, judge
from sleep.mine.heuristic import mine_sessions
from tests.sleep.test_mine_follow_up import CACHE, CLI, CONFIG, MIGRATION, PARSER, RETRY, Exchange
from tests.sleep.test_mine_follow_up import _session as exchange_session

ARCHIVE = Exchange(
    "add an archive subcommand that moves statements older than a year to archive/",
    "Added archive_old(folder) and the archive subcommand.",
    "def archive_old(folder):\n    for path in folder.glob('*.csv'):\n        shutil.move(path, ARCHIVE)",
)
SINCE = Exchange(
    "add a --since DATE option to balance",
    "balance --since 2026-01-01 now skips older entries.",
    "parser.add_argument('--since', type=date.fromisoformat)",
)
RATES = Exchange(
    "add a rates subcommand that prints todays rate for a currency pair",
    "Added the rates subcommand; fetch_rate() reads the json from the api.",
    "def fetch_rate(pair):\n    data = json.load(urlopen(URL + pair))\n    return data['rate']",
)

MORE_WORK = [
    (PARSER, "add tests for parse_duration"),
    (CLI, "use the same --json for the import command too"),
    (CONFIG, "validate the secrets file with load_config too"),
    (CACHE, "write a benchmark for resolve_host"),
    (ARCHIVE, "add a test for archive_old"),
    (SINCE, "use the same --since for export too"),
    (
        RATES,
        "parse the rates json with Decimal too, a float rate times a Decimal amount doesnt "
        "even work",
    ),  # fmt: skip
]
NEW_QUESTIONS = [
    (CACHE, "wait, what happens if two threads call resolve_host at once?"),
    (RETRY, "is download going to hang if the server never answers?"),
    (MIGRATION, "how do i run only the migration tests?"),
    (ARCHIVE, "wait, what happens if two archive runs overlap?"),
]
# A constraint sentence, then a request of its own: the constraint is the new request's
HEADED = [
    (RETRY, "no sleeping in tests, fake the clock. add a checksum check to download() in fetch.py",
     "no sleeping in tests, fake the clock"),
    (ARCHIVE, "no real http in tests, patch it out. add a retry to fetch_rate: try once more "
              "when the api times out, with a test", "no real http in tests, patch it out"),
]  # fmt: skip
# What these rules must not take: corrections that open on a verb of work, point at the
# thing made, or ask about it briefly.
STILL_CORRECTIONS = [
    (CLI, "we dont use print for output here, the cli logs. make it a log call like the rest"),
    (RETRY, "do these hit the real server? tests cant touch the network, stub session.get"),
    (RATES, "that test needs wifi to pass lol. monkeypatch fetch_rate"),
    (CACHE, "make it an lru_cache"),
    (PARSER, "could you add type hints to parse_duration? everything else in there has them"),
    (RETRY, "too many attempts, make it two"),
    (CLI, "turn that into a --format json|csv option"),
]


def _mined(exchange: Exchange, text: str) -> dict:
    return {t.intent: t for t in mine_sessions([exchange_session(exchange, text)])}


@pytest.mark.parametrize(("exchange", "text"), MORE_WORK + NEW_QUESTIONS,
                         ids=[t for _e, t in MORE_WORK + NEW_QUESTIONS])  # fmt: skip
def test_more_work_or_a_new_question_is_a_task_of_its_own(exchange, text):
    """Fails on the old code (each was read as a correction), except three guards: "write a
    benchmark for resolve_host", "is download going to hang …", "how do i run only the
    migration tests?"."""
    tasks = _mined(exchange, text)
    assert set(tasks) == {exchange.request, text}, f"{text!r} was swallowed as a correction"
    assert tasks[exchange.request].corrections == []
    [heard] = tasks[exchange.request].follow_ups
    assert not heard.attached and heard.why.startswith("new request ("), heard.why


@pytest.mark.parametrize(("exchange", "text", "head"), HEADED, ids=[t for _e, t, _h in HEADED])
def test_a_constraint_sentence_before_a_new_request_is_that_requests(exchange, text, head):
    """Fails on the old code: the prompt was a correction of the request before it."""
    tasks = _mined(exchange, text)
    assert set(tasks) == {exchange.request, text}
    assert tasks[exchange.request].corrections == []
    assert head in tasks[text].rubric


@pytest.mark.parametrize(("exchange", "text"), STILL_CORRECTIONS,
                         ids=[t for _e, t in STILL_CORRECTIONS])  # fmt: skip
def test_corrections_that_look_like_requests_still_attach(exchange, text):
    """Guards that the precision rules leave these alone, except "make it an lru_cache" and
    "turn that into …", which fail on the old code (the object of the verb was read as new
    work; it is the thing made, pointed at)."""
    tasks = _mined(exchange, text)
    assert list(tasks) == [exchange.request], f"{text!r} was mined as a request of its own"
    assert [c.text for c in tasks[exchange.request].corrections] == [text]


def test_the_reason_says_why_it_is_new_work():
    before = Before(ARCHIVE.request, ARCHIVE.answer, ARCHIVE.added)
    assert "asks for more work" in judge("add a test for archive_old", before).why
    assert "asks what would happen" in judge("what happens if the folder is empty?", before).why
    before = Before(SINCE.request, SINCE.answer, SINCE.added)
    assert "extends the work to more" in judge("use the same --since for export too", before).why


@pytest.mark.parametrize(
    "text",
    [
        "One more thing: add a docstring to create_note.",
        "Also: rename parse to parse_line everywhere",
        "next: write the export command for the csv files",
        "ok so, one more thing - add tests for the importer",
        "quick question - can the report take a --since flag as well",
    ],
)
def test_a_head_that_only_announces_the_request_is_no_constraint(text):
    """ "One more thing:" demands nothing; read as a constraint it gave the real Claude
    Code session's docstring request a rubric of "One more thing" (test_night_handoff)."""
    from sleep.mine.follow_up import stated_up_front

    assert stated_up_front(text) is None


@pytest.mark.parametrize(
    ("text", "head"),
    [
        (
            "all timestamps in UTC please: add since(readings, hours)",
            "all timestamps in UTC please",
        ),
        (
            "stick to argparse for this one - add a rates subcommand",
            "stick to argparse for this one",
        ),
    ],
)
def test_a_head_that_demands_something_still_is(text, head):
    from sleep.mine.follow_up import stated_up_front

    assert stated_up_front(text) == head
