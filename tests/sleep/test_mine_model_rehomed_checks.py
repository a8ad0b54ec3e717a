"""A correction the model miner re-homes gets the structural checks the heuristic gives
one it recognises (issue 37, round 6: `_rehome` in sleep/mine/with_model.py attached the
rubric and the phrase rules' checks, but never read the correction against the answer it
corrects, so "utcnow() is naive" gave no `diff_not_adds`). Wordings written for this test;
the miner model is a TEST DOUBLE."""

from __future__ import annotations

from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import Check
from sleep.mine.with_model import mine_with_model
from tests.sleep.test_mine_model_corrections import scripted  # the miner model's TEST DOUBLE

REQUEST = "add a nightly cleanup job to jobs.py"
# opens as a full question about a name the exchange never used: the heuristic mines it as
# a request of its own, the model (rightly) as a correction
FIX = (
    "how would timezone.utc look in the scheduler? utcnow() is naive, "
    "datetime.now(timezone.utc) like stale() does"
)
SESSION = {
    "source": "claude", "session_id": "m1", "cwd": "/p", "branch": "main", "automation": False,
    "tasks": [
        {"text": REQUEST, "timestamp": "2026-12-01T10:00:00Z", "answer": "Added cleanup().",
         "tools": ["Edit"],
         "edits": [{"path": "/p/jobs.py", "old": "",
                    "new": "def cleanup():\n    cutoff = datetime.utcnow() - WEEK\n"}]},
        {"text": FIX, "timestamp": "2026-12-01T10:01:00Z", "answer": "Now aware.",
         "tools": ["Edit"]},
        {"text": "thanks", "timestamp": None},
    ],
}  # fmt: skip
REPLY = {"tasks": [
    {"intent": REQUEST, "kind": "agentic", "rubric": "", "sources": [1], "corrections": [2],
     "checks": [], "needs": []},
]}  # fmt: skip


async def test_a_rehomed_correction_is_read_against_the_answer_it_corrects():
    """Fails on the old code: the task had no check from the correction's code terms."""
    assert any(t.intent == FIX for t in mine_sessions([SESSION]))  # the premise: not recognised
    (task,) = await mine_with_model([SESSION], scripted(REPLY))
    assert task.intent == REQUEST and [c.text for c in task.corrections] == [FIX]
    assert Check("diff_not_adds", r"\butcnow\(\)") in task.checks  # what the answer used
    assert Check("diff_adds", r"\bdatetime\.now\(timezone\.utc\)") in task.checks
