"""A term the person refuses or reports where it should not be gives `diff_not_adds`, never
`diff_adds` (issue 37, round 6: the strong-brain night on ledger, bench/strong-night-
2026-12-06.md, saw "we dont use click anywhere" become `diff_adds \\bclick\\b` and "theres a
float() in budget" become `diff_adds \\bfloat\\b`, in both check builders); a question's own
"without" is no constraint, and a constraint ends at its clause; "in UTC" up front is a
check. Generic wordings written for this test beside the corpus's."""

from __future__ import annotations

import pytest

from sleep.mine.correction_checks import checks_for
from sleep.mine.evidence import constraints_in
from sleep.mine.follow_up import Before
from sleep.mine.heuristic import _constraints, mine_sessions
from sleep.mine.structural_checks import structural_checks
from tests.sleep.test_mine_corrections import prompt, session

REFUSED = [
    ("hmm we dont use click anywhere, the cli is argparse", r"\bclick\b"),
    ("we never use requests here, urllib is enough", r"\brequests\b"),
    ("ok. money stays Decimal tho, theres a float() in budget", r"\bfloat\b"),
    ("there's still a print() in main.py", r"\bprint\("),
]


@pytest.mark.parametrize(("text", "refused"), REFUSED, ids=[t for t, _r in REFUSED])
def test_a_refused_term_is_never_a_term_to_add(text, refused):
    """Fails on the old code: each gave `diff_adds` of the refused term."""
    checks = checks_for(text, agentic=True, commands_after=[])
    assert ("diff_not_adds", refused) in [(c.kind, c.value) for c in checks]
    assert not [c for c in checks if c.kind == "diff_adds" and c.value == refused]


def test_what_the_sentence_asks_for_beside_a_reported_term_is_still_wanted():
    checks = checks_for("money stays Decimal tho, theres a float() in budget", agentic=True)
    assert ("diff_adds", r"\bDecimal\b") in [(c.kind, c.value) for c in checks]


def test_use_without_a_negation_still_wants_the_term():
    """Guard: "use click for the cli" asks for click."""
    checks = checks_for("use click for the cli", agentic=True)
    assert [(c.kind, c.value) for c in checks] == [("diff_adds", r"\bclick\b")]


ANSWER = Before(
    "add a budget subcommand",
    "Added budget.",
    "+++ edited /p/budget.py\nspent = float(row['amount'])\n",
)
STRUCTURAL = [
    ("theres a float() in budget", r"\bfloat\("),
    ("we dont use click.group() anywhere", r"\bclick\.group\("),
    ("never call os.system() here", r"\bos\.system\("),
]


@pytest.mark.parametrize(("text", "refused"), STRUCTURAL, ids=[t for t, _r in STRUCTURAL])
def test_the_structural_checks_refuse_what_the_correction_refuses(text, refused):
    """Fails on the old code: a call the answer wrote with arguments (`float(row…)`) or
    not at all was taken as one to add."""
    checks = structural_checks(text, ANSWER, agentic=True)
    assert ("diff_not_adds", refused) in [(c.kind, c.value) for c in checks]
    assert not [c for c in checks if c.kind == "diff_adds"]


@pytest.mark.parametrize(
    "question",
    ["how do i list the tests without running them?", "can i build the docs without network?"],
)
def test_a_questions_own_without_is_no_constraint(question):
    """Fails on the old code: "without running them" became a preference."""
    assert constraints_in(question) == [] and _constraints(question) == []


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("dont delete anything without asking - add an archive subcommand that moves "
         "statements older than a year from data/ to archive/", "without asking"),
        ("never drop tables without asking - add a cleanup command for old sessions",
         "without asking"),
    ],
)  # fmt: skip
def test_an_inline_constraint_ends_at_its_clause(text, head):
    """Fails on the old code: the constraint ran on into the request after the dash."""
    assert head in constraints_in(text)
    assert not [c for c in _constraints(text) if "subcommand" in c or "cleanup" in c]


@pytest.mark.parametrize(
    "text",
    ["all timestamps in UTC please - add since(hours) to report.py",
     "keep every time in UTC: add a last_seen(host) to status.py"],
)  # fmt: skip
def test_a_constraint_in_utc_stated_up_front_is_a_check(text):
    """Fails on the old code: the up-front "in UTC" got a rubric line and no check."""
    first = prompt(text, "Added it.", edits=[{"path": "/p/report.py", "old": "", "new": "x"}])
    [task] = mine_sessions([session(first, prompt("thanks"))])
    assert [c for c in task.checks if c.kind == "diff_adds" and "timezone" in c.value]


@pytest.mark.parametrize(
    ("text", "refused"),
    [("is that click again? cli.py is argparse", r"\bclick\b"),
     ("is that print again?", r"\bprint\("),
     ("this os.path again..", r"\bos\.path\b")],
)  # fmt: skip
def test_that_term_again_refuses_it(text, refused):
    """Fails on the old code: a repeated miss pointed at ("is that X again?") gave no
    check."""
    checks = checks_for(text, agentic=True)
    assert [(c.kind, c.value) for c in checks] == [("diff_not_adds", refused)]


@pytest.mark.parametrize("text", ["that test again?", "is that it again?"])
def test_that_word_again_is_no_term(text):
    """Guard: a plain word or a pronoun is no code term."""
    assert checks_for(text, agentic=True) == []
