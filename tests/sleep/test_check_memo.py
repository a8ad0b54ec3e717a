"""A handoff night replays its items again every round: an answered `handoff-workspace`
replay comes back with the same work, and its command check (run in the real jail over
the kept workspace) must not run again, nor be counted again — the strong-model night
reported `not-run: 16` for 8 replays. Kept in the night's checks log, so a re-run of the
night (a new environment over the same files) does not run it either. The person's agent
and the judge are TEST DOUBLES writing the real handoff answer files."""

from __future__ import annotations

import json

import pytest

from core.models.handoff import HandoffWaiting
from sleep.mine.tasks import Check
from sleep.night.replay_checks import tally
from tests.sleep.handoff_replay_world import Night, workspace_named
from tests.support.jail import jail  # noqa: F401 - the fixture

# Each run of the check leaves one line in the workspace: the runs are counted there.
COUNTING_CHECK = "echo ran >> check-runs.txt && grep -q validated NOTES.md"


@pytest.mark.usefixtures("jail")
def test_a_replay_brought_back_by_later_rounds_runs_and_counts_its_check_once(tmp_path):
    night = Night(
        tmp_path,
        rubric="total() rejects negative numbers",
        checks=[Check("command", COUNTING_CHECK)],
    )
    with pytest.raises(HandoffWaiting):  # round 1: the replay prompt
        night.round()
    [replay] = night.waiting()
    workspace = workspace_named(replay.prompt)
    (workspace / "NOTES.md").write_text("validated\n")
    replay.answer.write_text("Validated total().")

    with pytest.raises(HandoffWaiting):  # round 2: the check runs, the judge is asked
        night.round()
    assert (workspace / "check-runs.txt").read_text() == "ran\n"
    [judge] = night.waiting()
    assert "`" + COUNTING_CHECK + "`: passed (exit 0)" in judge.prompt.read_text()
    judge.answer.write_text(json.dumps({"score": 0.9, "reason": "validates the input"}))

    result = night.round()  # round 3: the same work back, now judged
    assert result.soft == pytest.approx(0.9) and "passed (exit 0)" in result.explanation
    assert night.round().soft == pytest.approx(0.9)  # a re-run of the night: the same
    assert (workspace / "check-runs.txt").read_text() == "ran\n"  # run once, not per round
    assert tally(night.log) == {"pass": 1}
    [line] = night.log.read_text().splitlines()
    assert json.loads(line)["item"] == "t-validate"
