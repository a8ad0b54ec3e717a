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
from tests.sleep.test_mine_model_requests import EXPORT, SESSION, request

LOGGING = "no print() calls please, use the logging module"
QUESTION = "hmm, does export_csv() overwrite the file if it exists?"


def _session(*middle: str) -> dict:
    """The export request, `middle` prompts, then a question about export_csv()."""
    session = copy.deepcopy(SESSION)
    export = session["tasks"][0]
    said = [{"text": text, "timestamp": f"2026-11-01T10:01:0{i}Z", "answer": "Switched."}
            for i, text in enumerate(middle)]  # fmt: skip
    question = {"text": QUESTION, "timestamp": "2026-11-01T10:02:00Z",
                "answer": "Yes, it replaces the file."}  # fmt: skip
    session["tasks"] = [export, *said, question]
    return session


async def test_a_question_the_miner_makes_a_task_takes_its_checks_and_preference_along():
    """Fails on the old code: the export task kept the question's preference id and the
    check read from it (`diff_adds export_csv()`), with no correction left on it."""
    session = _session()
    (export,) = mine_sessions([session])
    # the defect's premise: the heuristic attached the question to the export request
    assert [c.text for c in export.corrections] == [QUESTION]
    assert export.preference and export.checks
    reply = {"tasks": [request(EXPORT, 1, "agentic"), request(QUESTION, 2, "advice")]}
    by_intent = {t.intent: t for t in await mine_with_model([session], scripted(reply))}
    export = by_intent[EXPORT]
    assert (export.corrections, export.rubric, export.checks) == ([], "", [])
    assert export.preference is None
    assert by_intent[QUESTION].source_sessions == ["codex:r1"]


async def test_what_a_correction_left_on_the_task_implies_stays():
    """Only what the moved prompt implied goes: the logging correction, its checks and
    its preference stay on the export task."""
    session = _session(LOGGING)
    (export,) = mine_sessions([session])
    assert [c.text for c in export.corrections] == [LOGGING, QUESTION]
    (alone,) = mine_sessions([_only(LOGGING)])  # the export task with no question after it
    reply = {"tasks": [request(EXPORT, 1, "agentic"), request(QUESTION, 3, "advice")]}
    by_intent = {t.intent: t for t in await mine_with_model([session], scripted(reply))}
    export = by_intent[EXPORT]
    assert [c.text for c in export.corrections] == [LOGGING]
    assert set(export.checks) == set(alone.checks) and alone.checks
    assert export.preference == alone.preference is not None


def _only(text: str) -> dict:
    """The export request corrected by `text`, with no question after it."""
    session = _session(text)
    session["tasks"] = session["tasks"][:-1]
    return session
