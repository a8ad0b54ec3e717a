"""A prompt the model reads as a request of its own, that the heuristic attached to the
request before it as a correction (issue 37, round 6: on the held-out ledger corpus "no
real http in tests, patch it out. add a retry to fetch_rate …" and "wait, is fetch_rate
going to hang forever …?" were taken as corrections, and the model's tasks for them
refined the request they were attached to: "add an export command" became advice,
replayed as chat). The model's task is a task of its own, and the request it was attached
to gets back its rubric, corrections and the answer the person accepted. Wordings are not
from the corpora; the miner model is a TEST DOUBLE."""

from __future__ import annotations

from sleep.mine.heuristic import mine_sessions
from sleep.mine.with_model import mine_with_model
from tests.sleep.test_mine_model_keeps import scripted  # the miner model's TEST DOUBLE

EXPORT = "add a csv export to report.py"
# One sentence: the heuristic still reads it as a correction of the export (a sentence of
# its own before the request, "… stub it. add a retry …", it reads as stated up front).
RETRY = "no network in the tests please, stub it, and add a retry to upload() in sync.py"
QUESTION = "wait, does upload() give up after one timeout?"
SESSION = {
    "source": "codex", "session_id": "r1", "cwd": "/p", "branch": "main", "automation": False,
    "tasks": [
        {"text": EXPORT, "timestamp": "2026-11-01T10:00:00Z", "answer": "Added export_csv().",
         "tools": ["Edit"]},
        {"text": RETRY, "timestamp": "2026-11-01T10:01:00Z",
         "answer": "upload() retries once; the test stubs the network.", "tools": ["Edit"]},
        {"text": QUESTION, "timestamp": "2026-11-01T10:02:00Z",
         "answer": "No: it retries once, then raises."},
    ],
}  # fmt: skip


def request(intent: str, source: int, kind: str, rubric: str = "") -> dict:
    return {"intent": intent, "kind": kind, "rubric": rubric, "checks": [], "sources": [source],
            "corrections": [], "needs": []}  # fmt: skip


REPLY = {"tasks": [
    request(EXPORT, 1, "agentic"),
    request(RETRY, 2, "agentic", "The tests stub the network."),
    request(QUESTION, 3, "advice"),
]}  # fmt: skip


async def test_a_request_the_heuristic_took_for_a_correction_becomes_its_own_task():
    """Fails on the old code: the retry and the question refined the export task (its
    kind became advice) and neither was a task."""
    heuristic = mine_sessions([SESSION])
    assert RETRY not in [t.intent for t in heuristic]  # the defect's premise
    by_intent = {t.intent: t for t in await mine_with_model([SESSION], scripted(REPLY))}
    assert set(by_intent) == {EXPORT, RETRY, QUESTION}
    export = by_intent[EXPORT]
    assert export.kind == "agentic" and export.rubric == "" and export.corrections == []
    assert export.reference == "Added export_csv()."  # what the person moved on from
    assert by_intent[RETRY].kind == "agentic" and by_intent[QUESTION].kind == "advice"
    assert "stub the network" in by_intent[RETRY].rubric
