"""A follow-up is read by its structure (sleep/mine/follow_up.py), not by its wording: each
case is a session of its own (a request, an answer with its edit, the follow-up, thanks)
in wordings written for this test, none taken from the corrections corpora (19
corrections, 14 look-alike requests). A correction
lands on the request before it; a new request that looks like one (an "instead", a "now
add", a question about the same file) is a task of its own. Each decision carries its
one-line reason."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sleep.mine.follow_up import Before, judge
from sleep.mine.heuristic import mine_sessions
from tests.sleep.test_mine_corrections import prompt, session


@dataclass(frozen=True)
class Exchange:
    request: str
    answer: str
    added: str = ""  # the code the answer wrote ("" for a reply without edits)


RETRY = Exchange(
    "add a retry to download() in fetch.py",
    "download() now retries three times.",
    "for attempt in range(3):\n    resp = session.get(url)\n    if resp.ok:\n        return resp",
)
CONFIG = Exchange(
    "make load_config read the settings from config.yaml",
    "load_config now parses config.yaml with yaml.load.",
    "def load_config(path):\n    with open(path) as fh:\n        return yaml.load(fh)",
)
CACHE = Exchange(
    "cache the results of resolve_host() in dns.py",
    "resolve_host keeps every answer in a module-level dict.",
    "_CACHE = {}\n\ndef resolve_host(name):\n    if name in _CACHE:\n        return _CACHE[name]",
)
SORTING = Exchange(
    "sort the releases by date in releases.js",
    "releases are sorted with releases.sort((a, b) => a.date > b.date).",
    "releases.sort((a, b) => a.date > b.date)",
)
MIGRATION = Exchange(
    "rename the users table to accounts in a new migration",
    "Added 0042_accounts.py renaming the table.",
    "op.rename_table('users', 'accounts')",
)
CLI = Exchange(
    "add a --json option to the export command in cli.py",
    "export --json prints the records.",
    "if args.json:\n    print(records)",
)
EXPLAIN = Exchange(
    "what does the scheduler in jobs.py do with a job that fails?",
    "The scheduler catches the exception, logs it, waits with exponential backoff and "
    "retries up to five times; after that it marks the job dead and moves on. " * 4,
)
UNDO = Exchange("how do I undo my last commit?", "Run `git reset --hard HEAD~1`.")
PARSER = Exchange(
    "write a parser for the duration strings like 1h30m in timeparse.py",
    "Added parse_duration(text) returning seconds.",
    "class DurationParser:\n    def parse(self, text):\n        ...",
)

CORRECTIONS = [
    (RETRY, "the loop never waits between attempts, it hammers the server"),
    (RETRY, "backoff?"),
    (CONFIG, "yaml.load on a file users edit is unsafe, safe_load"),
    (CACHE, "that dict grows forever, bound it"),
    (SORTING, "that comparator returns a boolean, sort needs a number"),
    (MIGRATION, "you left the old index name behind"),
    (RETRY, "still hammers the server"),
    (CLI, "print(records) gives a python repr, not json"),
    (CLI, "lint?"),
    (CLI, "and the changelog?"),
    (EXPLAIN, "way too much, two sentences max"),
    (UNDO, "that throws my changes away, I want to keep them"),
    (PARSER, "why a class? a plain function was enough"),
    (CACHE, "you never evict anything"),
    (MIGRATION, "0042_accounts.py has no downgrade"),
    (RETRY, "did the tests pass after that?"),
    (CONFIG, "load_config crashes when config.yaml is missing"),
    (RETRY, "download should give up after a minute"),
    (EXPLAIN, "in two sentences"),
]
REQUESTS = [
    (RETRY, "now add a progress bar to the download as well"),
    (RETRY, "also add a --timeout option to the cli"),
    (RETRY, "write the same thing for upload() in push.py"),
    (CLI, "export the records as csv instead of printing them"),
    (CLI, "what does the --force option of the installer do?"),
    (CONFIG, "does load_config also read environment variables?"),
    (SORTING, "delete the unused helpers in utils.js while you're at it"),
    (MIGRATION, "thanks. how do I run the migrations on staging?"),
    (CACHE, "great, works. now add a resolve_all(names) that resolves a list in parallel"),
    (PARSER, "ok next: a format_duration(seconds) that goes the other way"),
    (UNDO, "which merge strategy does our CI use for release branches?"),
    (MIGRATION, "the dashboard shouldn't show archived projects"),
    (RETRY, "is there a way to log each attempt?"),
    (RETRY, "the upload page times out since this morning, could you have a look?"),
]


def _session(exchange: Exchange, follow_up: str) -> dict:
    edit = {"path": "/p/code.py", "old": "", "new": exchange.added} if exchange.added else None
    first = prompt(exchange.request, exchange.answer, **({"edits": [edit]} if edit else {}))
    return session(first, prompt(follow_up, "Done."), prompt("thanks"))


@pytest.mark.parametrize(("exchange", "text"), CORRECTIONS, ids=[t for _e, t in CORRECTIONS])
def test_a_correction_lands_on_the_request_it_corrects(exchange, text):
    tasks = {t.intent: t for t in mine_sessions([_session(exchange, text)])}
    assert list(tasks) == [exchange.request], f"{text!r} was mined as a request of its own"
    task = tasks[exchange.request]
    assert [c.text for c in task.corrections if c.text == text] == [text]
    [heard] = task.follow_ups
    assert heard.attached and heard.why.startswith("correction ("), heard.why


@pytest.mark.parametrize(("exchange", "text"), REQUESTS, ids=[t for _e, t in REQUESTS])
def test_a_new_request_that_looks_like_a_correction_is_a_task_of_its_own(exchange, text):
    tasks = {t.intent: t for t in mine_sessions([_session(exchange, text)])}
    assert set(tasks) == {exchange.request, text}, f"{text!r} was swallowed as a correction"
    assert tasks[exchange.request].corrections == []
    [heard] = tasks[exchange.request].follow_ups
    assert not heard.attached and heard.why.startswith("new request ("), heard.why


def test_the_reason_names_the_signals_that_decided():
    verdict = judge("backoff?", Before(RETRY.request, RETRY.answer, RETRY.added))
    assert verdict.correction and "a terse fragment" in verdict.why
    verdict = judge(
        "now add a progress bar to the download as well",
        Before(RETRY.request, RETRY.answer, RETRY.added),
    )
    assert not verdict.correction and "new work on" in verdict.why and "moves on" in verdict.why
    verdict = judge("yaml.load is unsafe here", Before(CONFIG.request, CONFIG.answer, CONFIG.added))
    assert "names yaml.load from the exchange" in verdict.why


def test_what_it_refers_back_to_decides_not_its_words():
    """The same words are a correction after an answer that made what they name, and a new
    request after one that did not."""
    text = "parse_duration should reject negative values"
    assert judge(text, Before(PARSER.request, PARSER.answer, PARSER.added)).correction
    assert not judge(text, Before(UNDO.request, UNDO.answer)).correction


def test_the_follow_ups_show_in_the_dry_run_listing():
    from sleep.mine.tasks import task_listing
    from sleep.night.replay_modes import replay_at_night, replay_mode

    [task] = mine_sessions([_session(RETRY, "backoff?")])
    listed = task_listing(task, replay_mode(task, "handoff"), replay_at_night(task, "handoff"))
    [heard] = listed["follow_ups"]
    assert heard["text"] == "backoff?" and heard["attached"] is True
    assert heard["why"].startswith("correction (")


STOPPED = "walk me through how the cache in store.py decides what to evict"


def test_a_stopped_answer_dismissed_and_narrowed_makes_the_stopped_request_a_task():
    stopped = prompt(STOPPED, "Sure! Let's start with the data structures. First, ...",
                     interrupted=True)  # fmt: skip
    narrowed = "ugh, essay mode. does it evict on write or not?"
    mined = mine_sessions([session(stopped, prompt(narrowed, "Not on write."), prompt("thx"))])
    assert [t.intent for t in mined] == [STOPPED]
    assert [c.text for c in mined[0].corrections] == [narrowed]


def test_a_new_question_after_a_stopped_answer_leaves_the_stopped_request_out():
    stopped = prompt(STOPPED, "Sure! Let's start with", interrupted=True)
    asked = "how do I bump the version in setup.cfg?"
    mined = mine_sessions([session(stopped, prompt(asked, "Edit version = ..."), prompt("thx"))])
    assert [t.intent for t in mined] == [asked]


@pytest.mark.parametrize("text", ["why?", "really?", "so?", "and?"])
def test_a_fragment_with_nothing_in_it_corrects_nothing(text):
    """It names nothing and rejects nothing: no correction, and no acceptance either."""
    [task] = mine_sessions([_session(RETRY, text)])
    assert task.corrections == [] and "correct an earlier answer" not in task.rubric
    [heard] = task.follow_ups
    assert not heard.attached and heard.why.startswith("a short fragment, part of the request")
