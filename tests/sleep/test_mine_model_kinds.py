"""The miner role may say what kind a task is (sleep/mine/with_model.py): a kind it gives is
validated and kept; without one the heuristic decides, with the session's evidence."""

import json

import pytest

from core.models.types import Completion, Usage
from sleep.mine.with_model import MinerFailed, mine_with_model

SESSION = {
    "source": "claude",
    "session_id": "s1",
    "cwd": "/p",
    "branch": "main",
    "automation": False,
    "tasks": [
        {
            "text": "what is in the data folder?",
            "timestamp": None,
            "tools": ["Bash"],
            "commands": ["ls data", "make test"],
        },
        {"text": "tell the team on slack that the import finished", "timestamp": None},
    ],
}


def scripted(*replies: dict):
    """A TEST DOUBLE of the miner model: its replies in order."""
    queue = [json.dumps(r) for r in replies]

    async def complete(_messages, **_settings):
        return Completion(queue.pop(0), Usage(1, 1), "stop", 0.0, "double")

    return complete


async def test_a_kind_the_model_gives_is_kept():
    reply = {"tasks": [{"intent": "tell the team on slack that the import finished",
                        "kind": "external", "sources": [2]}]}  # fmt: skip
    [task] = await mine_with_model([SESSION], scripted(reply))
    assert task.kind == "external"


async def test_without_a_kind_the_heuristic_reads_the_sessions_tool_calls_and_commands():
    reply = {"tasks": [{"intent": "what is in the data folder?", "sources": [1]}]}
    [task] = await mine_with_model([SESSION], scripted(reply))
    assert task.kind == "agentic"  # the assistant ran a shell command answering it
    assert [(c.kind, c.value) for c in task.checks] == [("command", "make test")]
    assert not task.train_only


async def test_an_unknown_kind_is_repaired_once_then_stops_the_night():
    bad = {"tasks": [{"intent": "x y z", "kind": "chore", "sources": [1]}]}
    with pytest.raises(MinerFailed, match='"kind" must be one of'):
        await mine_with_model([SESSION], scripted(bad, bad))
