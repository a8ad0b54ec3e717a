"""The console logger renders the run's events as lines on stderr: one per gate decision,
epoch and run end; a progress bar only on a terminal."""

from __future__ import annotations

import io

from core.run.events import (
    BudgetUpdated,
    EpochFinished,
    GateDecided,
    LearningRateDecided,
    RolloutFinished,
    RunFailed,
    RunFinished,
    RunStarted,
    StepFinished,
)
from skillopt_tui.console import ConsoleLogger


def started(**changes) -> RunStarted:
    """The RunStarted of a small capitals run, with the fields a test is about changed."""
    fields = dict(
        run_id="r1", env="capitals", strategy="fewshot", target_model="local:smollm2",
        optimizer_model="none", epochs=1, steps_per_epoch=2, train_items=6, val_items=5,
        test_items=3,
    )  # fmt: skip
    return RunStarted(**{**fields, **changes})


def test_one_line_per_decision_and_a_final_line():
    out = io.StringIO()
    log = ConsoleLogger(out)
    log(started(resumed=True, start_step=1))
    log(
        RolloutFinished(
            phase="train",
            step=1,
            split="train",
            skill_hash="h",
            item_id="a",
            task_type="t",
            hard=1.0,
            soft=1.0,
            latency_s=0.1,
        )
    )
    log(
        BudgetUpdated(
            calls=3, cache_hits=0, input_tokens=100, output_tokens=5, cost_usd=0.0, cap_tokens=1000
        )
    )
    log(
        GateDecided(
            step=1,
            accepted=True,
            best_before=0.2,
            candidate_score=0.6,
            items_scored=5,
            items_total=5,
            rollouts_saved=0,
            items_improved=2,
            items_regressed=0,
            staged_ref="staged/step-0001.md",
        )
    )
    log(
        StepFinished(
            step=1,
            epoch=0,
            train_hard=0.5,
            train_soft=0.5,
            best_val=0.6,
            accepted=True,
            edit_budget=4,
        )
    )
    log(
        GateDecided(
            step=2,
            accepted=False,
            best_before=0.6,
            candidate_score=None,
            items_scored=2,
            items_total=5,
            rollouts_saved=3,
            at_most=0.6,
        )
    )
    log(EpochFinished(epoch=0, best_val=0.6))
    log(RunFinished(status="finished", baseline_val=0.2, best_val=0.6, test={"best": 0.5}))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("run r1: resuming at step 1")
    assert (
        "step 1: accepted · val 0.200 → 0.600 · items +2/−0 · staged staged/step-0001.md" in lines
    )
    # Rejected early: the bound it could not beat, never "val —" (issue 22, strong-model run)
    assert "step 2: rejected early · val ≤ 0.600 vs best 0.600 · after 2/5 items (saved 3)" in lines
    assert "epoch 1 done · best val 0.600" in lines
    assert lines[-1] == "finished · val baseline 0.200 → best 0.600 · test best 0.500"


def test_stopped_and_failed_runs_say_why():
    out = io.StringIO()
    log = ConsoleLogger(out)
    log(
        RunFinished(status="stopped", baseline_val=0.1, best_val=0.3, reason="token budget reached")
    )
    log(RunFailed(error="RuntimeError: boom", step=2))
    assert out.getvalue().splitlines() == [
        "stopped · best val 0.300 · token budget reached",
        "failed at step 2: RuntimeError: boom",
    ]


def step_done(step: int, budget: int) -> StepFinished:
    return StepFinished(
        step=step,
        epoch=0,
        train_hard=0.5,
        train_soft=0.5,
        best_val=0.6,
        accepted=False,
        edit_budget=budget,
    )


def test_an_autonomous_learning_rate_gets_one_line_per_step():
    out = io.StringIO()
    log = ConsoleLogger(out)
    log(LearningRateDecided(step=0, count=2, pool=4, asked=2, confidence="high"))
    log(LearningRateDecided(step=1, count=0, pool=3, asked=None, error="not JSON"))
    log(step_done(1, 0))
    log(step_done(2, 0))  # the schedule's 0, no decision: said as before
    assert out.getvalue().splitlines() == [
        "step 0: learning rate · apply 2 of 4 · confidence high",
        "step 1: learning rate · apply 0 of 3 · unusable reply (not JSON) · no candidate this step",
        "step 2: edit budget 0, no edits",
    ]


def gate(step, accepted, score, *, source="step", **kw) -> GateDecided:
    values = dict(items_scored=5, items_total=5, rollouts_saved=0)
    values.update(kw)
    return GateDecided(
        step=step,
        accepted=accepted,
        best_before=0.4,
        candidate_score=score,
        source=source,
        **values,
    )


def test_a_slow_update_is_named_not_reported_as_its_step():
    """Issue 22 (strong-model run): "step 1: rejected" then "step 1: accepted" — the second
    was the epoch end's slow update, numbered with the epoch's last step. Fails on the old
    console (it printed both as "step 1")."""
    out = io.StringIO()
    log = ConsoleLogger(out)
    log(gate(1, False, 0.2))
    log(step_done(1, 4))
    log(gate(1, True, 0.6, source="slow_update", items_improved=1))
    lines = out.getvalue().splitlines()
    assert lines == [
        "step 1: rejected · val 0.200 vs best 0.400",
        "slow update (after step 1): accepted · val 0.400 → 0.600 · items +1/−0",
    ]


def test_the_significance_gates_p_is_its_own_field_and_a_merge_is_named():
    # With train.gate.significance the line shows the test's p and the items it counted,
    # not only inside the reason; a Pareto merge is named like a slow update.
    out = io.StringIO()
    log = ConsoleLogger(out)
    test = dict(p_value=0.34375, items_counted=5, reason="rejected: not significant, …")
    log(gate(2, False, 0.5, items_improved=3, items_regressed=2, **test))
    log(gate(2, True, 0.6, source="merge", items_improved=4, p_value=0.0625, items_counted=4))
    log(gate(3, False, 0.6, items_improved=1, p_value=0.5, items_counted=1))
    assert out.getvalue().splitlines() == [
        "step 2: rejected · val 0.500 vs best 0.400 · sign test p=0.344 over 5 changed items",
        "merge (after step 2): accepted · val 0.400 → 0.600 · items +4/−0"
        " · sign test p=0.0625 over 4 changed items",
        "step 3: rejected · val 0.600 vs best 0.400 · sign test p=0.5 over 1 changed item",
    ]


def test_a_candidate_never_scored_says_so():
    out = io.StringIO()
    log = ConsoleLogger(out)
    log(gate(3, False, None, items_scored=0, reason="invalid candidate: empty skill"))
    assert out.getvalue().splitlines() == [
        "step 3: rejected · not scored · invalid candidate: empty skill"
    ]


def test_counts_of_one_are_singular():
    out = io.StringIO()
    ConsoleLogger(out)(started(steps_per_epoch=1, train_items=1, val_items=1, test_items=1))
    line = out.getvalue()
    assert "1 epoch × 1 step" in line and "epochs" not in line and "steps" not in line


class _Clock:
    """A test double for time.monotonic: the test says how much time has passed."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _wait_for(out: io.StringIO, text: str) -> str:
    import time

    for _ in range(500):  # polls; asserts what was written, never how fast
        if text in out.getvalue():
            return out.getvalue()
        time.sleep(0.02)
    return out.getvalue()


def test_a_log_that_is_not_a_terminal_gets_progress_lines_between_decisions():
    out, clock = io.StringIO(), _Clock()
    log = ConsoleLogger(out, progress_every=0.01, clock=clock)
    log.expected_calls = 400
    log(started(epochs=2))
    log(
        RolloutFinished(
            phase="baseline",
            step=0,
            split="val",
            skill_hash="h",
            item_id="a",
            task_type="t",
            hard=1.0,
            soft=1.0,
            latency_s=0.1,
        )
    )
    log(BudgetUpdated(calls=10, cache_hits=0, input_tokens=1, output_tokens=1, cost_usd=0.0))
    clock.now += 90
    log(BudgetUpdated(calls=100, cache_hits=0, input_tokens=1, output_tokens=1, cost_usd=0.0))
    text = _wait_for(out, "progress: ")
    log.close()
    line = next(ln for ln in text.splitlines() if ln.startswith("progress: "))
    assert "baseline" in line and "0/4 steps done" in line
    # 90 calls in 90 s since the first reply: 1 s a call, 300 calls left
    assert "100/≤400 model calls" in line and "1m30s elapsed" in line and "eta ≤ 5m00s" in line
    closed = out.getvalue()
    import time

    time.sleep(0.1)
    assert out.getvalue() == closed  # close() stops the lines


def test_the_eta_leaves_out_the_start_up_before_the_first_reply():
    """The embedded server's start-up once made the first progress line say "eta ≤ 7h19m"
    after 4 calls: the elapsed time before the first reply is not a call's cost."""
    out, clock = io.StringIO(), _Clock()
    log = ConsoleLogger(out, progress_every=3600, clock=clock)
    log.expected_calls = 1700
    log(started(epochs=2))
    clock.now += 60  # the server starts and reads its first prompt
    log(BudgetUpdated(calls=4, cache_hits=0, input_tokens=1, output_tokens=1, cost_usd=0.0))
    first = log.progress_line()
    clock.now += 20
    log(BudgetUpdated(calls=44, cache_hits=0, input_tokens=1, output_tokens=1, cost_usd=0.0))
    later = log.progress_line()
    log.close()
    assert "eta — (measuring the call rate)" in first
    # 40 calls in 20 s after the first reply: 0.5 s a call, 1,656 calls left
    assert "eta ≤ 13m48s" in later
