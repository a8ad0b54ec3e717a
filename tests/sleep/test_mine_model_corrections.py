"""The model miner can say "this prompt corrects request X" (issue 37, round 5: on the
held-out greenhouse corpus the heuristic mined corrections it did not recognise as tasks
of their own, and the model miner could only add rubric to a task: the correction stayed
a context-free task, was never one of the request's `corrections`, and the answer it
corrected stayed the request's reference). A correction the model names is attached in
the shape the heuristic gives one it recognises. Fails on the code before."""

from __future__ import annotations

import json

from core.models.types import Completion, Usage
from sleep.mine.heuristic import mine_sessions
from sleep.mine.judged_by import correction_note
from sleep.mine.tasks import Check
from sleep.mine.with_model import mine_with_model, numbered_prompts, prompts_listing


def render_listing(sessions):
    return prompts_listing(numbered_prompts(sessions, False))


# "give me the gist in one line" opens on a verb of work with an object the exchange never
# named, so the heuristic (sleep/mine/follow_up.py) mines it as a request of its own and
# takes the long answer as the reference.
UNRECOGNISED = "give me the gist in one line"
SESSION = {
    "source": "codex", "session_id": "g1", "cwd": "/p", "branch": "main", "automation": False,
    "tasks": [
        {"text": "what does the scheduler do when the sensor feed goes quiet?",
         "timestamp": "2026-12-01T10:00:00Z", "answer": "A long walk-through " * 20,
         "tools": ["Read"]},
        {"text": UNRECOGNISED, "timestamp": "2026-12-01T10:02:00Z",
         "answer": "It keeps the last reading for ten minutes, then pauses watering."},
        {"text": "thanks", "timestamp": None},
    ],
}  # fmt: skip


def scripted(*replies: dict):
    """A TEST DOUBLE of the miner model: its replies in order."""
    queue = [json.dumps(r) for r in replies]

    async def complete(messages, **_settings):
        return Completion(queue.pop(0), Usage(1, 1), "stop", 0.0, "double")

    return complete


REPLY = {"tasks": [
    {"intent": "what does the scheduler do when the sensor feed goes quiet?", "kind": "advice",
     "rubric": "Answers in one line.", "sources": [1], "corrections": [2],
     "checks": [{"kind": "answer_first_line_max", "value": "30 words"}]},
]}  # fmt: skip


async def test_a_correction_the_model_names_is_attached_to_the_request_it_corrects():
    heuristic = mine_sessions([SESSION])
    assert any(t.intent == UNRECOGNISED for t in heuristic)  # the defect's premise
    tasks = await mine_with_model([SESSION], scripted(REPLY))
    assert [t.intent for t in tasks] == [SESSION["tasks"][0]["text"]]
    (task,) = tasks
    assert correction_note(UNRECOGNISED) in task.rubric  # the heuristic's shape
    assert [(c.text, c.session, c.agent) for c in task.corrections] == [
        (UNRECOGNISED, "codex:g1", "codex")
    ]
    assert Check("answer_first_line_max", "30 words") in task.checks
    # the corrected walk-through is no reference; what the person thanked for is
    assert task.reference == "It keeps the last reading for ten minutes, then pauses watering."


async def test_a_correction_listed_first_among_sources_does_not_become_the_request():
    reply = {"tasks": [{**REPLY["tasks"][0], "sources": [2, 1], "corrections": [2]}]}
    (task,) = await mine_with_model([SESSION], scripted(reply))
    assert task.intent == SESSION["tasks"][0]["text"]


STOPPED = {
    "source": "claude", "session_id": "g2", "cwd": "/p", "branch": "main", "automation": False,
    "tasks": [
        {"text": "explain how the frost alert decides", "interrupted": True, "aborted": True,
         "answer": "The frost alert reads"},
        {"text": "nvm, too long. can a stale sensor trigger a frost alert, yes or no?",
         "answer": "No: stale sensors are skipped before the frost check."},
    ],
}  # fmt: skip


async def test_an_interrupted_request_is_shown_when_its_redirect_is_worded_unrecognisably():
    seen: list[str] = []
    reply = {"tasks": [{"intent": "explain how the frost alert decides", "kind": "advice",
                        "rubric": "", "sources": [1], "corrections": [2],
                        "checks": [{"kind": "answer_starts_with", "value": "yes|no"}]}]}  # fmt: skip

    async def complete(messages, **_settings):
        seen.append(messages[-1]["content"])
        return Completion(json.dumps(reply), Usage(1, 1), "stop", 0.0, "double")

    (task,) = await mine_with_model([STOPPED], complete)
    assert "1. [claude:g2] (the person interrupted its answer) explain how" in seen[0]
    assert task.intent == "explain how the frost alert decides"
    assert [c.text for c in task.corrections] == [STOPPED["tasks"][1]["text"]]
    assert Check("answer_starts_with", "yes|no") in task.checks


def test_the_prompt_shows_how_each_reply_began():
    shown = render_listing([SESSION])
    assert "It keeps the last reading for ten minutes" in shown
    assert len(shown) < 2000  # a reply is an excerpt, not the walk-through


MIXED = {
    "source": "claude", "session_id": "g3", "cwd": "/p", "branch": "main", "automation": False,
    "tasks": [
        {"text": "add alert_line(reading, kind) to alerts.py", "answer": "Added alert_line.",
         "tools": ["Edit"]},
        {"text": "thx. tests with every change pls. next: add heat_stress(reading) to alerts.py, true above 35C",
         "answer": "Added heat_stress and tests/test_heat.py.", "tools": ["Edit"]},
    ],
}  # fmt: skip


async def test_a_prompt_that_corrects_one_request_and_asks_the_next_stays_a_request():
    reply = {"tasks": [
        {"intent": "add alert_line(reading, kind) to alerts.py", "kind": "agentic",
         "rubric": "", "sources": [1], "corrections": [2], "checks": []},
        {"intent": "add heat_stress(reading) to alerts.py", "kind": "agentic",
         "rubric": "", "sources": [2], "corrections": [], "checks": []},
    ]}  # fmt: skip
    tasks = {t.intent[:12]: t for t in await mine_with_model([MIXED], scripted(reply))}
    assert sorted(tasks) == ["add alert_li", "thx. tests w"]
    assert [c.text for c in tasks["add alert_li"].corrections] == [
        "thx. tests with every change pls."
    ]
    assert tasks["thx. tests w"].corrections == []


# Stopped, then a question of its own (no word dismisses the stopped answer): the
# heuristic reads no redirect (sleep/mine/follow_up.py), so the model's word decides.
STOPPED_THEN_ASKED = {
    **STOPPED,
    "tasks": [STOPPED["tasks"][0],
              {"text": "can a stale sensor trigger a frost alert, yes or no?", "answer": "No."}],
}  # fmt: skip


async def test_an_interrupted_request_with_no_redirect_named_is_no_task():
    asked = STOPPED_THEN_ASKED["tasks"][1]["text"]
    reply = {"tasks": [
        {"intent": "explain how the frost alert decides", "kind": "advice", "rubric": "",
         "sources": [1], "corrections": [], "checks": []},
        {"intent": asked, "kind": "advice", "rubric": "", "sources": [2], "corrections": [],
         "checks": []},
    ]}  # fmt: skip
    tasks = await mine_with_model([STOPPED_THEN_ASKED], scripted(reply))
    assert [t.intent for t in tasks] == [asked]


async def test_a_task_the_model_names_no_prompt_of_is_still_kept():
    reply = {"tasks": [{"intent": "add a --dry-run flag to the uploader", "kind": "agentic",
                        "rubric": "", "sources": [], "corrections": [], "checks": []}]}  # fmt: skip
    tasks = await mine_with_model([STOPPED], scripted(reply))
    assert "add a --dry-run flag to the uploader" in [t.intent for t in tasks]
