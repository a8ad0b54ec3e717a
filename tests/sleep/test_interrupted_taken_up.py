"""An interrupted request the miner model makes a task of is no request left out
(issue 37, ledger round 6: "how do i get a coverage report for just rates.py", stopped
and followed by "ugh too long. whats the command", was a task and still listed under
`left_out` in night.json and the dry run). The real `skillopt sleep dry-run` on the
ledger corpus (tests/sleep/corrections_world.py), a real HTTP server on loopback as the
miner model (a TEST DOUBLE answering from the prompts it is shown)."""

from __future__ import annotations

import json
import re

import pytest

from tests.sleep.corrections_world import LEDGER_CORPUS, lay_out
from tests.sleep.test_miner_default import MINER_MODEL, NO_TASKS, _config
from tests.support.loopback_openai import LoopbackOpenAI, RecordedRequest, Reply

STOPPED = "how do i get a coverage report for just rates.py"


def _miner(request: RecordedRequest) -> Reply:
    """Makes the interrupted coverage request a task, redirected by the prompt after it."""
    if "replayable tasks" not in request.last_user:
        return Reply(NO_TASKS)
    numbers = re.findall(r"^(\d+)\. \[[^\]]*\](.*)$", request.last_user, re.MULTILINE)
    stopped = [int(n) for n, text in numbers if STOPPED in text]
    if not stopped:
        return Reply(NO_TASKS)
    task = {"intent": STOPPED, "kind": "advice", "sources": [stopped[0]],
            "corrections": [stopped[0] + 1], "checks": []}  # fmt: skip
    return Reply(json.dumps({"tasks": [task]}))


@pytest.fixture
def world(tmp_path, monkeypatch):
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    return lay_out(tmp_path / "world", LEDGER_CORPUS)


def test_an_interrupted_request_the_miner_made_a_task_is_not_left_out(world, tmp_path):
    """Fails on the old code: the dry run listed it under left_out beside its task."""
    with LoopbackOpenAI(handler=_miner) as server:
        miner = {"backend": "auto", "base_url": server.base_url, "model": MINER_MODEL}
        dry = world.sleep("dry-run", "--config", str(_config(tmp_path, miner)), "--json")
    plan = json.loads(dry.stdout)
    assert STOPPED in json.dumps(plan["skills"])  # the miner's task (the premise)
    assert [e for e in plan["left_out"] if e["prompt"].startswith(STOPPED)] == []
    assert "left out: interrupted" not in dry.stderr
