"""Corrections in shapes the held-out recipes corpus (tests/sleep/fixtures/corrections_recipes)
showed mining missed, pinned with other wordings than the corpus's so the rules are about
how people write, not about that corpus: an "and"/"also" opening, "<practice> pls, we
don't do …", "every other … has one", a thing named as a bare question ("type hints?"),
"I didn't ask for that", "keep the changes minimal", "…, seriously?"; commits the person
refuses and tests they want left alone become checks a replay applies without a judge."""

from __future__ import annotations

import pytest

from sleep.mine.correction_checks import checks_for, concepts
from sleep.mine.corrections import is_correction
from sleep.mine.evidence import constraints_in
from sleep.mine.tasks import Check, ReplayEvidence
from tests.sleep.test_mine_corrections import by_intent, prompt, session

REQUEST = "add a slugify(text) helper to textutil.py"


@pytest.mark.parametrize(
    "text",
    [
        "and why did the import block get reordered, nobody asked",
        "also stop printing debug lines to stdout",
        "type hints pls, we never write untyped functions here",
        "where are the type hints? each other module in api/ has them",
        "type hints?",
        "the README changed too, I didn't ask for that",
        "could you keep the changes minimal, the imports moved for no reason",
        "print statements in library code, seriously?",
    ],
)
def test_it_corrects_the_request_before_it(text):
    tasks = by_intent(
        session(
            prompt(REQUEST, "Added slugify.", edited=True),
            prompt(text, "Fixed.", edited=True),
            prompt("thanks"),
        )
    )
    assert list(tasks) == [REQUEST], f"{text!r} was mined as a request of its own"
    assert [c.text for c in tasks[REQUEST].corrections] == [text]


@pytest.mark.parametrize("text", ["why?", "really?", "done?", "ok?"])
def test_a_bare_question_word_is_no_correction(text):
    assert not is_correction(text)


def test_a_thing_asked_after_becomes_a_check_for_it():
    docstring = [c for c in checks_for("docstrings?", agentic=True) if c.kind == "diff_adds"]
    assert docstring and docstring[0].evaluate(ReplayEvidence("ok", '+    """Why."""\n')) is True
    assert docstring[0].evaluate(ReplayEvidence("ok", "+    return x\n")) is False
    # "no X again" says X is missing, not banned
    again = checks_for("no docstring again.. and type hints, not Any", agentic=True)
    both = checks_for("no docstring again. and f-strings, not %", agentic=True)
    assert docstring[0] in both and any(c.kind == "diff_adds" and "f[" in c.value for c in both)
    assert Check("diff_not_adds", docstring[0].value) not in again
    assert docstring[0] in again and any(c.kind == "diff_adds" and "->" in c.value for c in again)
    assert concepts("where's the docstring?") == concepts("docstrings pls") == {"want:docstring"}


@pytest.mark.parametrize(
    "text",
    ["never commit without asking me", "why'd you commit that??", "leave commits to me"],
)
def test_a_refused_commit_is_checked_on_the_commands_the_agent_ran(text):
    assert Check("no_commit", "") in checks_for(text, agentic=True)
    assert "no-commit" in concepts(text)


def test_no_commit_reads_the_commands_and_says_nothing_without_them():
    check = Check("no_commit", "")
    assert check.evaluate(ReplayEvidence("ok", "", ["git add -A && git commit -m wip"])) is False
    assert check.evaluate(ReplayEvidence("ok", "", ["git -C repo commit -qam x"])) is False
    assert check.evaluate(ReplayEvidence("ok", "", ["make test", "git status"])) is True
    assert check.evaluate(ReplayEvidence("ok", "", None)) is None  # a handoff: it cannot tell


def test_tests_left_alone_become_a_check_on_the_paths_the_diff_touches():
    found = [
        c for c in checks_for("leave the specs alone", agentic=True) if c.kind == "diff_leaves"
    ]
    assert found, "no diff_leaves check"
    check = found[0]
    touched = "--- a/tests/test_text.py\n+++ b/tests/test_text.py\n@@ -1 +1 @@\n-a\n+b\n"
    deleted = "--- a/pkg/text_test.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
    source = "--- a/textutil.py\n+++ b/textutil.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert check.evaluate(ReplayEvidence("ok", touched)) is False
    assert check.evaluate(ReplayEvidence("ok", deleted)) is False
    assert check.evaluate(ReplayEvidence("ok", source)) is True
    assert check.evaluate(ReplayEvidence("ok", None)) is None  # a chat reply has no diff


def test_constraints_up_front_on_commits_and_on_all_new_code():
    assert constraints_in("never push or commit, just edit: make parse() accept tabs") == [
        "never push or commit"
    ]
    assert constraints_in("type hints on every new function — add slugify(text) to text.py") == [
        "type hints on every new function"
    ]
