"""Model errors during rollouts (an outage of the target): a scoring phase never turns them
into zeros, it abandons the step and the run stays resumable; train rollouts keep them
unless the whole batch failed. On the scenario of tests/support/train_scenario.py.

Call numbers in the scenario's uninterrupted run, phases one after the other: 1-5 baseline
(val), 6-8 step 0 train, 9-13 step 0 gate (the candidate scores 3/5 and is accepted). With
early work (README "What runs early") the baseline and the initial skill's test run beside
step 0, so an outage of one phase is given by the stage of the call (`fail_stage`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.ledger import STAGE
from core.models.types import ModelError, TransientError
from core.run.directory import RunDirectory
from core.run.events import EventBus, RunFailed, StepFinished, read_events
from core.training.trainer import run_training
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config

# The scenario's initial skill plus a format rule: v03 and v04 are right from the start.
RULE_SKILL = INITIAL_SKILL + "\nAnswer with only the city name.\n"


class OutageTarget:
    """The skill-sensitive TEST DOUBLE behind a connection that fails every call (retries
    included) from call number `fail_from` on (1-based), every call whose question
    `fail_if` picks, or every call of the loop stage `fail_stage` (the ledger's: rollout,
    baseline, gate, ...) from that stage's `fail_from`-th call on, until the test sets
    `up = True`."""

    def __init__(self, fail_from: int | None = None, fail_if=None, fail_stage: str = ""):
        self.double = SkillSensitiveTarget()
        self.fail_from = fail_from
        self.fail_if = fail_if
        self.fail_stage = fail_stage
        self.up = False
        self.calls = 0
        self.stage_calls = 0
        self.answered = 0

    def __call__(self, request) -> str:
        self.calls += 1
        question = request.messages[-1]["content"]
        counted = self.calls
        if self.fail_stage:
            if STAGE.get() != self.fail_stage:
                counted = 0
            else:
                self.stage_calls += 1
                counted = self.stage_calls
        down = (self.fail_from is not None and counted and counted >= self.fail_from) or (
            self.fail_if is not None and self.fail_if(question)
        )
        if down and not self.up:
            raise TransientError("connection refused by 127.0.0.1:9 (test outage)")
        self.answered += 1
        return self.double(request)


async def no_sleep(_seconds: float) -> None:
    return None


async def train(tmp_path: Path, target, *, initial_skill: str = INITIAL_SKILL, on_event=None):
    config = config_from_dict(scenario_config(tmp_path))
    client = build_model_client(
        config,
        scripted={"target": target},
        retry_sleep=no_sleep,
        cache_path=tmp_path / "responses.sqlite",
    )
    bus = EventBus()
    if on_event is not None:
        bus.subscribe(on_event)
    try:
        return await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / "run"),
            bus=bus,
            client=client,
            initial_skill=initial_skill,
        )
    finally:
        await client.aclose()


def state_of(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "run" / "state.json").read_text())


async def test_outage_during_the_baseline_is_not_a_zero_baseline(tmp_path):
    target = OutageTarget(fail_from=1)
    with pytest.raises(ModelError) as failed:
        await train(tmp_path, target, initial_skill=RULE_SKILL)
    message = str(failed.value)
    assert type(failed.value).__name__ == "RolloutsFailed"
    assert "5 of 5 val rollouts failed (baseline)" in message and "test outage" in message
    assert "resumable" in message and "\n" not in message
    state = state_of(tmp_path)
    assert state["status"] == "failed" and state["baseline_score"] is None
    assert isinstance(list(read_events(tmp_path / "run" / "events.jsonl"))[-1], RunFailed)
    target.up = True  # the server is back: the resumed run measures the baseline
    summary = await train(tmp_path, target, initial_skill=RULE_SKILL)
    assert summary.status == "finished"
    assert summary.baseline_val == pytest.approx(2 / 5)


async def test_outage_during_the_gate_abandons_the_step_and_caches_nothing(tmp_path):
    reference = await train(tmp_path / "ref", OutageTarget())
    # From the third val item of step 0's candidate on.
    target = OutageTarget(fail_from=3, fail_stage="gate")
    with pytest.raises(ModelError, match=r"val rollouts failed \(gate, step 0\)"):
        await train(tmp_path, target)
    state = state_of(tmp_path)
    assert (state["next_step"], state["status"], state["baseline_score"]) == (0, "failed", 0.0)
    assert not (tmp_path / "run" / "staged").exists()
    target.up = True
    resumed = await train(tmp_path, target)
    keys = ("baseline_val", "best_val", "final_val", "test", "accepted_steps", "best_version")
    assert {k: getattr(resumed, k) for k in keys} == {k: getattr(reference, k) for k in keys}
    # Only the failed call is made again: everything answered was cached.
    ref_calls = OutageTarget()
    await train(tmp_path / "count", ref_calls)
    assert target.answered == ref_calls.answered


async def test_some_failed_train_rollouts_are_kept_all_failed_stop_the_run(tmp_path):
    t01 = "What is the capital of France?"
    target = OutageTarget(fail_if=lambda q: q == t01)

    def back_after_step_0(event) -> None:
        if isinstance(event, StepFinished) and event.step == 0:
            target.up = True

    summary = await train(tmp_path / "some", target, on_event=back_after_step_0)
    assert summary.status == "finished"
    rows = (tmp_path / "some" / "run" / "steps" / "0000" / "rollouts.jsonl").read_text()
    first = json.loads(rows.splitlines()[0])
    assert first["item_id"] == "t01" and "test outage" in first["error"] and first["hard"] == 0

    with pytest.raises(ModelError, match=r"3 of 3 train rollouts failed \(train, step 0\)"):
        await train(tmp_path / "all", OutageTarget(fail_from=1, fail_stage="rollout"))
    assert state_of(tmp_path / "all")["next_step"] == 0
