"""A prompt the heuristic took for a correction and the miner model made a task of its own
leaves no trace on the request it was attached to: no correction, rubric line, check or
preference (issue 37, round 6: on the held-out ledger corpus "add a test for archive_old"
kept the preference of "wait, what happens if two archive runs overlap?" after the miner
made that question a task, a held-out "occurrence" with no correction behind it).
Wordings are not from the corpora; the miner model is a TEST DOUBLE."""

from __future__ import annotations

import copy

from sleep.mine.heuristic import mine_sessions
from sleep.mine.with_model import mine_with_model
from tests.sleep.test_mine_model_keeps import scripted  # the miner model's TEST DOUBLE
from tests.sleep.test_mine_model_requests import EXPORT, QUESTION, SESSION, request

RETRY = "no print() calls please, use the logging module for the retry in upload()"
TAKEN = copy.deepcopy(SESSION)
TAKEN["tasks"][1]["text"] = RETRY
REPLY = {"tasks": [
    request(EXPORT, 1, "agentic"),
    request(RETRY, 2, "agentic"),
    request(QUESTION, 3, "advice"),
]}  # fmt: skip


async def test_a_correction_the_miner_makes_a_task_takes_its_checks_and_preference_along():
    """Fails on the old code: the export task kept the preference id of the question and
    the logging/print checks of the retry request, with neither correction left on it."""
    (export,) = mine_sessions([TAKEN])
    # the defect's premise: the heuristic attached both prompts to the export request
    assert len(export.corrections) == 2 and export.preference and export.checks
    by_intent = {t.intent: t for t in await mine_with_model([TAKEN], scripted(REPLY))}
    export = by_intent[EXPORT]
    assert (export.corrections, export.rubric, export.checks) == ([], "", [])
    assert export.preference is None
    assert by_intent[RETRY].source_sessions == ["codex:r1"]


async def test_a_check_another_correction_still_implies_stays():
    """Only what the moved prompt alone implied goes: the same check from a correction
    left on the task stays (and its preference with it)."""
    session = copy.deepcopy(TAKEN)
    again = {"text": "and no print() in export either, use logging",
             "timestamp": "2026-11-01T10:03:00Z", "answer": "Switched to logging."}  # fmt: skip
    session["tasks"].insert(1, again)
    reply = {"tasks": [request(EXPORT, 1, "agentic"), request(RETRY, 3, "agentic")]}
    by_intent = {t.intent: t for t in await mine_with_model([session], scripted(reply))}
    export = by_intent[EXPORT]
    assert [c.text for c in export.corrections] == [again["text"], QUESTION]
    assert {c.kind for c in export.checks} >= {"diff_adds", "diff_not_adds"}
    assert export.preference is not None
