"""The model miner keeps everything the heuristic keeps (issue 37: with `models.miner` set,
every task came back with no reference, context or prior edits, its prompt told it to skip
mid-session prompts and its checks allowed no command or diff check). Fails on the code
before."""

from __future__ import annotations

import json

import pytest

from core.models.types import Completion, Usage
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import Check
from sleep.mine.with_model import MinerFailed, mine_with_model, numbered_prompts
from sleep.prompts import render_sleep_prompt

SESSION = {
    "source": "claude", "session_id": "s1", "cwd": "/p", "branch": "main", "automation": False,
    "tasks": [
        {"text": "add a --verbose flag to cli.py", "timestamp": "2026-12-01T10:00:00Z",
         "answer": "Added --verbose with print().", "tools": ["Edit"],
         "edits": [{"path": "/p/cli.py", "old": "a", "new": "print('v')"}]},
        {"text": "no, use logging instead of print", "timestamp": "2026-12-01T10:05:00Z",
         "answer": "Switched --verbose to logging.", "tools": ["Edit"]},
        {"text": "now write tests for these changes", "timestamp": "2026-12-01T10:10:00Z",
         "answer": "Added tests/test_cli.py; make test passes.", "tools": ["Write", "Bash"],
         "commands": ["make test"]},
        {"text": "thanks", "timestamp": None},
    ],
}  # fmt: skip


def scripted(*replies: dict, seen: list[str] | None = None):
    """A TEST DOUBLE of the miner model: its replies in order."""
    queue = [json.dumps(r) for r in replies]

    async def complete(messages, **_settings):
        if seen is not None:
            seen.append(messages[-1]["content"])
        return Completion(queue.pop(0), Usage(1, 1), "stop", 0.0, "double")

    return complete


REPLY = {"tasks": [
    {"intent": "add a --verbose flag to cli.py", "kind": "agentic",
     "rubric": "Uses the logging module, not print.", "sources": [1, 2],
     "checks": [{"kind": "diff_not_adds", "value": "\\bprint\\("},
                {"kind": "ran", "value": "\\bmake\\s+test\\b"}]},
    {"intent": "Write tests for the --verbose flag of cli.py", "kind": "agentic",
     "rubric": "", "sources": [3], "checks": []},
]}  # fmt: skip


async def test_the_model_miner_keeps_reference_context_prior_edits_and_corrections():
    heuristic = {t.id: t for t in mine_sessions([SESSION])}
    seen: list[str] = []
    tasks = {t.id: t for t in await mine_with_model([SESSION], scripted(REPLY, seen=seen))}
    assert set(tasks) == set(heuristic)  # same ids: the same splits whichever miner ran
    for tid, task in tasks.items():
        before = heuristic[tid]
        assert task.intent == before.intent and task.reference == before.reference
        assert task.context == before.context and task.prior_edits == before.prior_edits
        assert task.corrections == before.corrections
    verbose = next(t for t in tasks.values() if t.intent.startswith("add a --verbose"))
    assert verbose.reference == "Switched --verbose to logging."
    assert Check("ran", r"\bmake\s+test\b") in verbose.checks
    assert "Uses the logging module, not print." in verbose.rubric
    follow_up = next(t for t in tasks.values() if t.intent.startswith("now write tests"))
    assert [t.prompt for t in follow_up.context][0] == "add a --verbose flag to cli.py"
    assert [e.path for e in follow_up.prior_edits] == ["cli.py"]
    assert Check("command", "make test") in follow_up.checks
    assert "replayed as a follow-up" in seen[0] and "only make sense in the middle" not in seen[0]


def test_the_prompt_shows_an_interrupted_request_the_person_redirected():
    stopped = {**SESSION, "tasks": [
        {"text": "walk me through load_rows() in loader.py", "interrupted": True, "aborted": True},
        {"text": "never mind the long version, just tell me if nulls are dropped"},
    ]}  # fmt: skip
    shown = [p["text"] for _sid, _s, p, _i in numbered_prompts([stopped], False)]
    assert shown[0] == "walk me through load_rows() in loader.py"
    assert "interrupted" in render_sleep_prompt("miner", prompts="1. x", needs="(none yet)")


@pytest.mark.parametrize(
    "check, problem",
    [
        ({"kind": "command", "value": "make test"}, "a check is"),
        ({"kind": "diff_adds", "value": "print("}, "no regular expression"),
        ({"kind": "answer_first_line_max", "value": "short"}, "<N> words"),
        ({"kind": "contains", "value": "the"}, "not the English word"),
    ],
)
async def test_a_check_the_replay_cannot_apply_is_repaired_once_then_stops_the_night(
    check, problem
):
    bad = {"tasks": [{"intent": "add a --verbose flag to cli.py", "kind": "agentic",
                      "rubric": "", "sources": [1], "checks": [check]}]}  # fmt: skip
    with pytest.raises(MinerFailed, match=problem):
        await mine_with_model([SESSION], scripted(bad, bad))
