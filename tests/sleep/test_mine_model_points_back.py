"""A follow-up the miner model (or the heuristic) makes a task of its own gets the turn it points back to
(issue 37, the greenhouse strong night: "and a test for it pls" had an empty context, so
neither the replay nor the judge saw what "it" was). The miner model is a TEST DOUBLE (its
replies scripted); the wordings are not the corpora's."""

from __future__ import annotations

from sleep.mine.heuristic import mine_sessions
from sleep.mine.with_model import mine_with_model
from tests.sleep.test_mine_model_keeps import scripted  # the miner model's TEST DOUBLE

ASKED = "write slugify(title) in text_utils.py:\nlowercase, dashes for spaces"


def session(follow_up: str) -> dict:
    return {
        "source": "claude", "session_id": "s9", "cwd": "/w", "branch": "main",
        "automation": False,
        "tasks": [
            {"text": ASKED, "timestamp": "2026-12-02T09:00:00Z",
             "answer": "Added slugify() to text_utils.py.", "tools": ["Edit"]},
            {"text": follow_up, "timestamp": "2026-12-02T09:04:00Z",
             "answer": "Added tests/test_text_utils.py.", "tools": ["Write"]},
        ],
    }  # fmt: skip


def reply(intent: str) -> dict:
    return {"tasks": [
        {"intent": ASKED, "kind": "agentic", "rubric": "", "sources": [1], "checks": []},
        {"intent": intent, "kind": "agentic", "rubric": "", "sources": [2], "checks": []},
    ]}  # fmt: skip


async def test_a_follow_up_made_its_own_task_shows_the_turn_it_points_back_to():
    for follow_up, intent in (
        ("plus a unit test for it pls", "Write a unit test for slugify"),
        ("does that function cope with unicode titles? fix if not", "Make slugify handle unicode"),
    ):
        tasks = await mine_with_model([session(follow_up)], scripted(reply(intent)))
        task = next(t for t in tasks if t.intent == intent)
        assert [(t.prompt, t.answer) for t in task.context] == [
            (ASKED, "Added slugify() to text_utils.py.")
        ], follow_up


async def test_a_new_request_that_points_nowhere_gets_no_context():
    intent = "Add a --dry-run option to deploy.sh"
    tasks = await mine_with_model(
        [session("add a --dry-run option to deploy.sh")], scripted(reply(intent))
    )
    assert next(t for t in tasks if "dry-run" in t.intent).context == []


def test_the_heuristic_shows_a_request_that_points_back_the_turn_it_follows():
    asked = "does that function cope with unicode titles like Ærø?"
    tasks = mine_sessions([session(asked)])
    task = next(t for t in tasks if t.intent == asked)
    assert [t.prompt for t in task.context] == [ASKED]
