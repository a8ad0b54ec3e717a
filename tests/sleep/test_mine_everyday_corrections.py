"""Corrections as people type them, beyond the shapes mining was first developed on (the
unseen corrections corpus, tests/sleep/fixtures/corrections_photos, found each of these
missed; the wordings here are other ones, to pin the rule and not the corpus): a
question or report about the last answer, a pointer to the project's convention, a
reminder, abbreviations, a short opening before the correction, a constraint heading a
new request, a correction and the next request in one prompt. And what follows from them:
their checks, their preferences, and the kinds of the requests around them."""

from __future__ import annotations

from sleep.mine.correction_checks import checks_for
from sleep.mine.evidence import constraints_in
from sleep.mine.heuristic import mine_sessions
from sleep.mine.kinds import kind_of
from sleep.mine.preferences import group_preferences
from sleep.mine.tasks import Check, MinedTask
from tests.sleep.test_mine_corrections import prompt, session

TYPE_HINTS = r"\)\s*->|:\s*\w+(?:\[[^\]]*\])?\s*[=,)]"


def by_intent(*sessions: dict) -> dict[str, MinedTask]:
    return {t.intent: t for t in mine_sessions(list(sessions))}


def test_questions_reports_and_reminders_correct_the_request_before_them():
    config = "add a load_settings() helper to config.py"
    duration = "write parse_duration(text) in timeutil.py"
    dry_run = "add a --dry-run flag to sync.py"
    retries = "does sync.py retry when the server times out?"
    tasks = by_intent(
        session(
            prompt(config, "Added load_settings() with os.path.", edited=True),
            prompt("hmm why os.path? the rest of the project is pathlib", "Switched.", edited=True),
            prompt("and docstrings pls, we have them everywhere", "Added one.", edited=True),
            prompt("ok thx"),
            prompt(duration, "Added parse_duration.", edited=True),
            prompt("missing type hints again", "Added them.", edited=True),
            prompt(dry_run, "Added --dry-run.", edited=True),
            prompt("you ran pytest right?", "Now yes: it passes.", commands=["pytest -q"]),
            prompt(retries, "Yes! 🎉 It retries three times 🔁"),
            prompt("yes ok. no emojis please", "It retries three times."),
            prompt("I said no emojis. one line", "Three retries."),
        )
    )
    assert set(tasks) == {config, duration, dry_run, retries}
    assert Check("diff_not_adds", r"\bos\.path\b") in tasks[config].checks
    assert Check("diff_adds", r"\bpathlib\b|\bPath\(") in tasks[config].checks
    assert "docstrings pls" in tasks[config].rubric
    assert Check("diff_adds", TYPE_HINTS) in tasks[duration].checks
    assert Check("ran", r"\bpytest") in tasks[dry_run].checks
    assert len(tasks[retries].corrections) == 2


def test_a_constraint_heading_a_new_request_stays_with_that_request():
    """ "don't …: <a new request>" is that request with a constraint up front, not a
    correction of the one before."""
    first = "add a cache to lookup() in geo.py"
    headed = "don't change the public API for this one: make retry() in net.py back off"
    tasks = by_intent(
        session(
            prompt(first, "Added an lru_cache.", edited=True),
            prompt(headed, "retry() now backs off exponentially.", edited=True),
            prompt("leave the fixtures alone - make fetch() in net.py time out after 5 s"),
        )
    )
    assert tasks[first].rubric == "" and tasks[first].corrections == []
    assert "don't change the public API for this one" in tasks[headed].rubric
    assert any("leave the fixtures alone" in t.rubric for t in tasks.values())
    # a correction that explains itself after a colon is still a correction
    explained = by_intent(
        session(
            prompt(first, "Added an lru_cache with npm's cache.", edited=True),
            prompt("no, use pnpm: npm install breaks the lockfile in package.json", "Ok."),
        )
    )
    assert set(explained) == {first}


def test_a_correction_and_the_next_request_in_one_prompt_are_both_kept():
    export = "add export_csv(rows) to report.py"
    both = "thx. and dataclasses from now on pls. next: add an import_csv(path) to report.py"
    tasks = by_intent(
        session(
            prompt(export, "Added export_csv with a dict per row.", edited=True),
            prompt(both, "Both done: Row is a dataclass, import_csv reads it back.", edited=True),
        )
    )
    assert set(tasks) == {export, both}
    corrected = tasks[export]
    assert [c.text for c in corrected.corrections] == ["thx. and dataclasses from now on pls."]
    assert Check("diff_adds", r"@dataclass\b|\bdataclasses\b") in corrected.checks
    assert corrected.reference == ""  # corrected, not accepted


def test_checks_from_questions_reports_and_bare_demands():
    assert checks_for("os.path again..", agentic=True) == [Check("diff_not_adds", r"\bos\.path\b")]
    assert checks_for("and the tests? did you even run them", agentic=True)[0].kind == "ran"
    # naming a practice while asking for something else back is no demand for it
    assert checks_for("put it back, the old assert was right", agentic=True) == []
    assert checks_for("add a retry to fetch()", agentic=True) == []


def test_a_description_is_no_constraint_and_leaving_alone_is_one():
    assert constraints_in("list the invoices without a due date in report.py") == []
    assert constraints_in("make sync.py quieter - leave the config alone") == [
        "leave the config alone"
    ]
    assert constraints_in("add a --since flag. pls run pytest before telling me it works") == [
        "pls run pytest before telling me it works"
    ]


def _said(*texts: str) -> list[MinedTask]:
    out = []
    for n, text in enumerate(texts):
        s = session(
            prompt(f"add a feature number {n} to app.py", "Done ✨", edited=True),
            prompt(text, "Fixed."),
            sid=f"s{n}",
            source="codex" if n % 2 else "claude",
        )
        out += mine_sessions([s])
    return out


def test_leaving_the_tests_alone_and_no_emojis_are_preferences_whatever_the_wording():
    tasks = _said(
        "why did you edit the spec file? put it back",
        "don't modify the tests to make it pass",
        "no changes to the tests please",
        "can you stop with the emojis",
        "plain text please, no emoji",
        "did you run the tests?",
    )
    sizes = sorted(len(p.occurrences) for p in group_preferences(tasks))
    assert sizes == [1, 2, 3]


def test_questions_about_behaviour_and_pasted_errors_are_advice():
    assert kind_of("explain how the scheduler picks the next job") == "advice"
    pasted = (
        "the release deploy fails: remote: Invalid credentials for "
        "'https://bot:[REDACTED:github_token]@github.com/acme/site.git' - has the token "
        "expired or was the repo renamed?"
    )
    assert kind_of(pasted) == "advice"
    assert kind_of("deploy it to staging, ok?") == "external"
    assert kind_of("is this token expired? [REDACTED:github_token]") == "redacted"
