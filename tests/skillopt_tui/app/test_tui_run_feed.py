"""RunFeed and RunFollower: events folded into what the Run screen shows."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from core.run.events import (
    BudgetUpdated,
    GateDecided,
    LearningRateDecided,
    RolloutFinished,
    RunFailed,
    RunStarted,
    StepFinished,
    read_events,
)
from skillopt_tui.app.run_feed import RunFeed, RunFollower, format_eta
from tests.support.tui_app import RUNS


def _start(ts: float = 100.0) -> RunStarted:
    return RunStarted(
        run_id="r",
        env="e",
        strategy="s",
        target_model="t",
        optimizer_model="o",
        epochs=1,
        steps_per_epoch=4,
        train_items=4,
        val_items=2,
        test_items=0,
        ts=ts,
    )


def _rollout(phase: str, hard: float) -> RolloutFinished:
    return RolloutFinished(
        phase=phase,
        step=0,
        split="val",
        skill_hash="h",
        item_id="i",
        task_type="qa",
        hard=hard,
        soft=hard,
        latency_s=0.1,
    )


def _step(step: int, best: float, ts: float, accepted: bool = True) -> StepFinished:
    return StepFinished(
        step=step,
        epoch=0,
        train_hard=0.5,
        train_soft=0.5,
        best_val=best,
        accepted=accepted,
        edit_budget=2,
        ts=ts,
    )


def test_a_burst_becomes_one_update_with_only_new_rows():
    feed = RunFeed()
    update = feed.apply(
        [
            _start(),
            _rollout("baseline", 1.0),
            _rollout("baseline", 0.0),
            GateDecided(
                step=0,
                accepted=True,
                best_before=0.5,
                candidate_score=0.75,
                items_scored=2,
                items_total=2,
                rollouts_saved=0,
            ),
            _step(0, 0.75, 110.0),
        ]
    )
    assert update.events == 5 and len(update.rollouts) == 2 and len(update.gates) == 1
    assert update.status.baseline_val == 0.5 and update.status.best_val == 0.75
    assert [(p.step, p.candidate_score, p.accepted) for p in update.steps] == [(0, 0.75, True)]
    # ETA from event timestamps: 10 s per step, 3 steps left
    assert update.eta_s == 30.0 and format_eta(update.eta_s) == "30s"
    again = feed.apply(
        [BudgetUpdated(calls=1, cache_hits=0, input_tokens=10, output_tokens=2, cost_usd=0.1)]
    )
    assert again.rollouts == [] and again.steps is None and again.budget.calls == 1


def test_failure_and_finish_end_the_eta():
    feed = RunFeed()
    feed.apply([_start(), _step(0, 0.5, 110.0)])
    update = feed.apply([RunFailed(error="boom", step=1)])
    assert update.status.status == "failed" and update.status.reason == "boom"
    assert update.eta_s is None


def test_replay_of_the_recorded_run():
    feed = RunFeed()
    update = feed.apply(read_events(RUNS / "demo-finished" / "events.jsonl"))
    assert update.status.status == "finished"
    assert [p.accepted for p in update.steps] == [True, False, True, False, True, False]
    assert update.candidate.step == 6


def test_learning_rate_decisions_are_new_rows_kept_through_a_merge():
    feed = RunFeed()
    first = feed.apply([_start(), LearningRateDecided(step=0, count=1, pool=3)])
    second = feed.apply([LearningRateDecided(step=1, count=0, pool=2, error="not JSON")])
    assert [(d.step, d.count) for d in first.lr_decisions] == [(0, 1)]
    assert [(d.step, d.error) for d in second.lr_decisions] == [(1, "not JSON")]
    assert [d.step for d in first.merge(second).lr_decisions] == [0, 1]
    replayed = RunFeed().apply(read_events(RUNS / "demo-finished" / "events.jsonl"))
    assert replayed.lr_decisions == []  # a fixed learning rate has none


def test_follower_delivers_complete_lines_only_and_marks_dead_runs(tmp_path: Path):
    log = tmp_path / "events.jsonl"
    got = []
    follower = RunFollower(tmp_path, got.append, alive=lambda _: False)
    assert follower.poll_once().events == 1  # nothing yet, but the status is news
    assert got[-1].status.status == "interrupted"
    log.write_text(json.dumps(_start().to_dict()) + "\n" + '{"type": "StepFin')
    follower.poll_once()
    assert got[-1].header.run_id == "r" and got[-1].steps is None
    with log.open("a") as fh:
        rest = json.dumps(_step(0, 0.5, 120.0).to_dict())[len('{"type": "StepFin') :]
        fh.write(rest + "\n")
    follower.poll_once()
    assert [p.step for p in got[-1].steps] == [0]
    count = len(got)
    follower.poll_once()
    assert len(got) == count  # nothing new: nothing delivered


def test_batches_wait_merged_while_the_ui_is_busy(tmp_path: Path):
    log = tmp_path / "events.jsonl"
    got = []
    busy = [True]
    follower = RunFollower(tmp_path, got.append, alive=lambda _: True, ready=lambda: not busy[0])
    log.write_text(
        json.dumps(_start().to_dict()) + "\n" + json.dumps(_rollout("train", 1.0).to_dict()) + "\n"
    )
    follower.poll_once()
    with log.open("a") as fh:
        fh.write(json.dumps(_rollout("train", 0.0).to_dict()) + "\n")
        fh.write(json.dumps(_step(0, 0.5, 110.0).to_dict()) + "\n")
    follower.poll_once()
    assert got == []  # the UI is busy: nothing queued behind it
    busy[0] = False
    follower.poll_once()
    assert len(got) == 1
    merged = got[0]
    assert merged.header.run_id == "r" and [r.hard for r in merged.rollouts] == [1.0, 0.0]
    assert [p.step for p in merged.steps] == [0] and merged.events == 4


def test_a_failed_run_replayed_in_one_batch_keeps_its_baseline():
    feed = RunFeed()
    update = feed.apply(
        [
            _start(),
            _rollout("baseline", 1.0),
            _rollout("baseline", 0.0),
            RunFailed(error="boom", step=1),
        ]
    )
    assert update.status.status == "failed" and update.status.baseline_val == 0.5


def test_budget_footer_names_the_stages_that_spent_most():
    from core.run.events import BudgetUpdated
    from skillopt_tui.app.widgets.budget_footer import budget_line

    event = BudgetUpdated(
        calls=9, cache_hits=0, input_tokens=900, output_tokens=90, cost_usd=0.5,
        per_stage={
            "rollout": {"calls": 5, "input_tokens": 500, "output_tokens": 50, "cost_usd": 0.1},
            "analyst": {"calls": 2, "input_tokens": 300, "output_tokens": 30, "cost_usd": 0.35},
            "gate": {"calls": 2, "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.05},
        },
    )  # fmt: skip
    line = budget_line(event, 1, 4, "live", None).plain
    assert "analyst $0.350, rollout $0.100" in line and "gate" not in line


def test_a_resumed_run_replaying_its_rollouts_shows_each_once():
    """Issue 19: a handoff run re-run in rounds replays the redone step's rollouts from the
    rollout cache; the Run tab counted them again ("61 rollouts" for a night of 13). A
    replayed rollout with another outcome is new information and stays."""
    feed = RunFeed()
    first = feed.apply([_start(), _rollout("train", 1.0), _rollout("train", 0.0)])
    again = feed.apply(
        [_start(200.0), _rollout("train", 1.0), _rollout("train", 0.0), _rollout("train", 0.5)]
    )
    assert len(first.rollouts) == 2
    assert [r.hard for r in again.rollouts] == [0.5]
    within = RunFeed().apply([_start(), _rollout("gate", 1.0), _rollout("gate", 1.0)])
    assert len(within.rollouts) == 2  # repeats inside one process (gate.repeats) all count


def test_a_rollout_the_engine_marks_replayed_is_not_a_new_row():
    """The engine marks a redone step's cached rollouts `replayed` (events.jsonl). One is
    skipped when its first showing is in the log, even within one process (where repeats
    otherwise count), and shown when that first showing is missing."""
    feed = RunFeed()
    first = feed.apply([_start(), _rollout("train", 1.0)])
    marked = replace(_rollout("train", 1.0), replayed=True)
    again = feed.apply([marked])
    assert len(first.rollouts) == 1 and again.rollouts == []
    lost = RunFeed().apply([_start(), replace(_rollout("train", 0.0), replayed=True)])
    assert [r.hard for r in lost.rollouts] == [0.0]
