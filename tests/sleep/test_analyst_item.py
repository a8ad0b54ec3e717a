"""How a sleep item reads in the optimizer's analyst prompt (core/optimizer/
reflection_groups.py), from a real handoff-workspace replay judged through the real handoff
files: each part of what it is judged by once, under its own name — the rubric, the
person's correction (not a "reference answer"), the answer they accepted (not a second
time in the evaluator's line) — and the reply's text checks counted apart from the
command check that failed, so "1/1 passed" beside a hard fail is no longer a riddle. The
strong-model night's prompt (0013-analyst-failure-0) had all three wrong."""

from __future__ import annotations

import asyncio
import json

import pytest

from core.environment.contract import RolloutResult
from core.models.handoff import HandoffWaiting
from core.models.types import TransientError
from core.optimizer.reflection_groups import render_pair, render_results, render_results_within
from core.optimizer.strategy import EpochPair
from sleep.mine.judged_by import correction_note
from sleep.mine.tasks import Check, MinedTask
from sleep.night.replay_env import ReplayEnvironment
from tests.sleep.handoff_replay_world import SKILL, Night, workspace_named
from tests.support.jail import jail  # noqa: F401 - the fixture

CORRECTION = "no, use Decimal not float, and raise InvoiceError for a bad total"
ACCEPTED = "total() now takes Decimals and raises InvoiceError for a negative amount."


def judged_night(tmp_path) -> RolloutResult:
    night = Night(
        tmp_path,
        rubric="Amounts are Decimal.\n" + correction_note(CORRECTION),
        reference=ACCEPTED,
        checks=[Check("contains", "Decimal"), Check("command", "test -f CHANGELOG.md")],
    )
    with pytest.raises(HandoffWaiting):
        night.round()
    [replay] = night.waiting()
    (workspace_named(replay.prompt) / "NOTES.md").write_text("validated\n")
    replay.answer.write_text("total() now uses Decimal and raises InvoiceError.")
    with pytest.raises(HandoffWaiting):
        night.round()
    [judge] = night.waiting()
    judge.answer.write_text(json.dumps({"score": 1.0, "reason": "Decimal and InvoiceError"}))
    return night.round()


@pytest.mark.usefixtures("jail")
def test_an_item_says_each_part_once_under_its_own_name(tmp_path):
    result = judged_night(tmp_path)
    assert result.hard == 0  # the command check failed: a hard fail
    for text in (
        render_results([result], skill_text=SKILL, max_chars=None),
        render_results_within([result], skill_text=SKILL, room_chars=100_000),
        render_pair(EpochPair(result.item_id, result, result, "still_failing")),
    ):
        lines = text.splitlines()
        assert "reference answer" not in text
        assert "rubric: Amounts are Decimal." in lines
        assert f"the person's correction of an earlier answer: {CORRECTION!r}" in lines
        assert f"the answer the person accepted in their session: {ACCEPTED}" in lines
        assert text.count(ACCEPTED) == 1 and text.count(CORRECTION) == 1
        evaluators = [line for line in lines if "evaluator: " in line]
        assert evaluators
        for evaluator in evaluators:
            assert "text checks 1/1 passed" in evaluator
            assert "command checks 0/1 passed; hard fail: `test -f CHANGELOG.md`" in evaluator
            assert "rubric" not in evaluator


def test_a_task_with_nothing_to_judge_by_says_so_and_other_environments_keep_their_label():
    task = MinedTask(id="t-1", intent="explain the retry policy", project=None)
    env = ReplayEnvironment({"val": [task]}, judge=None)
    [item] = env.load_split("val")

    async def down(_messages, **_):
        raise TransientError("the target is down")

    failed = asyncio.run(env.rollout(item, SKILL, down))  # the model error's result
    lines = render_results([failed], max_chars=None).splitlines()
    assert failed.error and "rubric: (none: the reply is judged against the request)" in lines
    other = RolloutResult("q-1", "qa", "2+2?", "4", "5", 0.0, 0.0, "wrong", [])
    assert "reference answer: 4" in render_results([other], max_chars=None)
