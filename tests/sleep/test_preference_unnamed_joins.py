"""A correction the miner model named no need for joins the named preference its words
match (issue 37, the greenhouse strong night: "thx. tests with every change pls." became a
preference of its own beside "add a test with every change", so the held-out item the test
rule fixed counted for none of that rule's preferences); and a named preference shows the
need's name, not its shortest wording ("test?")."""

from __future__ import annotations

from sleep.mine.preferences import group_preferences
from sleep.mine.tasks import Correction, MinedTask

TESTS = "add a test with every change"
UTC = "timezone-aware UTC times"


def task(tid: str, *corrections: Correction) -> MinedTask:
    return MinedTask(id=tid, intent=f"request {tid}", project=None, corrections=list(corrections))


def named(text: str, session: str, *needs: str) -> Correction:
    return Correction(text, session, "claude", "2026-12-01", needs)


def plain(text: str, session: str) -> Correction:
    return Correction(text, session, "codex", "2026-12-02")


def by_task(tasks: list[MinedTask]) -> dict[str, set[str]]:
    return {p.name: {o.task for o in p.occurrences} for p in group_preferences(tasks)}


def test_an_unnamed_correction_joins_the_need_its_words_match():
    tasks = [
        task("t-1", named("test?", "s1", TESTS)),
        task("t-2", named("always add a test with the change", "s2", TESTS)),
        task("t-3", named("datetime.now() with no tz??", "s3", UTC)),
        task("t-4", plain("thx. tests with every change pls.", "s4")),
    ]
    assert by_task(tasks) == {TESTS: {"t-1", "t-2", "t-4"}, UTC: {"t-3"}}


def test_an_unnamed_correction_joins_through_a_named_corrections_meaning():
    # worded like no need name, but meaning what a named correction means {want:logging}
    tasks = [
        task("t-1", named("no print calls, use the logging module", "s1", "log via logging")),
        task("t-2", plain("switch those over to logging pls", "s2")),
    ]
    assert by_task(tasks) == {"log via logging": {"t-1", "t-2"}}


def test_an_unnamed_correction_matching_no_need_stays_its_own():
    tasks = [
        task("t-1", named("test?", "s1", TESTS)),
        task("t-2", plain("keep the public API unchanged", "s2")),
    ]
    assert by_task(tasks) == {TESTS: {"t-1"}, "keep the public API unchanged": {"t-2"}}


def test_a_named_preference_shows_the_need_not_its_shortest_wording():
    tasks = [task("t-1", named("test?", "s1", TESTS)), task("t-2", named("tests pls", "s2", TESTS))]
    [preference] = group_preferences(tasks)
    assert (preference.name, preference.need, preference.text) == (TESTS, TESTS, "tests pls")
