"""Checks from a correction's code terms read against the answer it corrects
(sleep/mine/structural_checks.py), and kinds read from what a question asks
(sleep/mine/kinds.py), in wordings written for this test. Each fails on the code before:
there a correction naming an API by a shape no phrase lists got no check, "test?" got
none, a behaviour question the agent read files for was agentic, and a question about a
403 that cited its token was dropped as `redacted`."""

from __future__ import annotations

import pytest

from sleep.mine.heuristic import mine_sessions
from sleep.mine.kinds import kind_of
from sleep.mine.structural_checks import TEST_ADDED
from sleep.mine.tasks import Check, ReplayEvidence
from tests.sleep.test_mine_corrections import prompt, session

TIMER = "time how long sync() takes in sync.py"
TIMED = "start = time.time()\nsync()\nelapsed = time.time() - start"


def _corrected(request: str, added: str, correction: str, **after) -> list[Check]:
    edit = {"path": "/p/sync.py", "old": "", "new": added}
    first = prompt(request, "Done.", tools=["Edit"], edits=[edit], **after)
    [task] = mine_sessions([session(first, prompt(correction, "Fixed."), prompt("thanks"))])
    assert [c.text for c in task.corrections] == [correction]
    return task.checks


def _passes(check: Check, added: str) -> bool | None:
    diff = "+++ b/sync.py\n" + "".join(f"+{line}\n" for line in added.splitlines())
    return check.evaluate(ReplayEvidence("ok", diff))


def test_an_api_the_answer_used_and_the_correction_refuses_is_checked_on_the_diff():
    checks = _corrected(TIMER, TIMED, "time.time() again? it jumps with the wall clock")
    [avoid] = [c for c in checks if c.kind == "diff_not_adds"]
    assert _passes(avoid, "start = time.time()") is False
    assert _passes(avoid, "start = time.monotonic()") is True


def test_an_api_the_correction_names_and_the_answer_lacked_must_be_added():
    checks = _corrected(
        TIMER, TIMED, "time.time() jumps with the wall clock, time.monotonic() is what you want"
    )
    [want] = [c for c in checks if c.kind == "diff_adds"]
    assert _passes(want, "start = time.monotonic()") is True
    assert _passes(want, "start = time.time()") is False


def test_the_bare_call_is_refused_not_the_call_with_its_argument():
    checks = _corrected(
        "stamp each record with the time in records.py",
        "record['at'] = datetime.now()",
        "datetime.now() without a timezone?? everything else is aware",
    )
    [avoid] = [c for c in checks if c.kind == "diff_not_adds"]
    assert _passes(avoid, "record['at'] = datetime.now()") is False
    assert _passes(avoid, "record['at'] = datetime.now(timezone.utc)") is True


@pytest.mark.parametrize(
    "correction",
    [
        "json.loads with no error handling?? a bad line kills the import",  # keep it, handled
        "sync() crashes when the folder is missing",  # the thing made, not an API choice
        "it reads the whole folder at once, stream it",  # plain English names no code
    ],
)
def test_what_the_correction_does_not_refuse_gives_no_diff_not_adds(correction):
    added = "def sync(folder):\n    rows = [json.loads(line) for line in open(folder)]"
    checks = _corrected("make sync() read the json lines in sync.py", added, correction)
    assert [c for c in checks if c.kind == "diff_not_adds"] == []


def test_tests_asked_after_a_change_check_what_the_answer_lacked():
    [added] = [c for c in _corrected(TIMER, TIMED, "test?") if c.value == TEST_ADDED]
    assert added.kind == "diff_adds"
    assert _passes(added, "def test_sync_is_timed():\n    assert timed(sync)") is True
    assert _passes(added, "it('times the sync', () => {})") is True
    assert _passes(added, "elapsed = time.monotonic() - start") is False
    # the answer added its test but never ran it: the run is what it lacked
    with_test = TIMED + "\ndef test_timed():\n    assert True"
    checks = _corrected(TIMER, with_test, "and the tests?")
    assert Check("diff_adds", TEST_ADDED) not in checks
    assert any(c.kind == "ran" for c in checks)


def test_a_test_asked_for_up_front_is_checked_and_leaving_them_alone_is_not_one():
    ask = "always include a unit test - add a median(values) helper to stats.py"
    [task] = mine_sessions([session(prompt(ask, "Added median.", tools=["Edit"]))])
    assert Check("diff_adds", TEST_ADDED) in task.checks
    assert "always include a unit test" in [c.text for c in task.corrections]
    left = "dont touch the tests - add a mode(values) helper to stats.py"
    [task] = mine_sessions([session(prompt(left, "Added mode.", tools=["Edit"]))])
    assert Check("diff_adds", TEST_ADDED) not in task.checks


def test_a_bare_answer_asked_after_advice_is_a_one_line_check():
    first = prompt("how often does the poller call the api?", "Every 30 s. " * 40)
    [task] = mine_sessions([session(first, prompt("only the interval pls", "30 s."))])
    assert [c.kind for c in task.checks] == ["answer_first_line_max"]


@pytest.mark.parametrize(
    "question",
    [
        "how often does the poller call the api?",
        "what does normalise() return for an empty string?",
        "how many retries does upload.py make before giving up?",
    ],
)
def test_a_question_about_behaviour_is_advice_though_the_agent_read_files(question):
    assert kind_of(question, tools=["Read", "Grep"]) == "advice"
    assert kind_of(question, tools=["exec_command"], commands=["rg -n retry upload.py"]) == "advice"
    assert kind_of(question, tools=["Read", "Edit"]) == "agentic"  # it changed something


def test_a_question_about_an_error_is_not_about_the_token_it_cites():
    error = (
        "the webhook answers 403 with secret [REDACTED:generic_secret] - did it expire or "
        "is the scope wrong?"
    )
    assert kind_of(error) == "advice"
    assert kind_of("decode this token [REDACTED:jwt] and tell me when it expires") == "redacted"
    cited = "login fails with [REDACTED:github_token], decode it and say whose it is"
    assert kind_of(cited) == "redacted"
