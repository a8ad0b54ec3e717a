"""One step numbering everywhere (the run directory's steps/NNNN, from 0) and phases in
words: the console, the rollouts table, the footer and the header agree, test rollouts
say which skill they scored, and a baseline still running is never shown as a score."""

from __future__ import annotations

import io
import json
from pathlib import Path

from core.run.directory import RunDirectory
from core.run.events import GateDecided, RolloutFinished, RunStarted, StepFinished
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.run_feed import RunFeed
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.budget_footer import BudgetFooter
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable
from skillopt_tui.console import ConsoleLogger
from tests.support.tui_app import wait_until

VAL = ["v1", "v2", "v3"]


def _start() -> RunStarted:
    return RunStarted(
        run_id="numbered",
        env="e",
        strategy="s",
        target_model="t",
        optimizer_model="o",
        epochs=1,
        steps_per_epoch=2,
        train_items=2,
        val_items=len(VAL),
        test_items=2,
        ts=100.0,
    )


def _rollout(
    phase: str, step: int, item: str, hard: float = 1.0, role: str = ""
) -> RolloutFinished:
    return RolloutFinished(
        phase=phase,
        step=step,
        split="val",
        skill_hash="h",
        item_id=item,
        task_type="qa",
        hard=hard,
        soft=hard,
        latency_s=0.1,
        skill_role=role,
        ts=101.0,
    )


def _gated_step(step: int) -> list:
    return [
        _rollout("train", step, "t1"),
        _rollout("gate", step, "v1"),
        GateDecided(
            step=step,
            accepted=False,
            best_before=0.5,
            candidate_score=0.4,
            items_scored=3,
            items_total=3,
            rollouts_saved=0,
            ts=102.0 + step,
        ),
        StepFinished(
            step=step,
            epoch=0,
            train_hard=1.0,
            train_soft=1.0,
            best_val=0.5,
            accepted=False,
            edit_budget=2,
            ts=103.0 + step,
        ),
    ]


def _through_test_phase() -> list:
    baseline = [_rollout("baseline", -1, v, hard=float(i < 1)) for i, v in enumerate(VAL)]
    tests = [_rollout("test", 2, f"x{i}", role=r) for r in ("initial", "best") for i in (1, 2)]
    return [_start(), *baseline, *_gated_step(0), *_gated_step(1), *tests]


def _write(run_dir: Path, events: list) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(e.to_dict()) + "\n" for e in events)
    (run_dir / "events.jsonl").write_text(lines, encoding="utf-8")


def _app(run_dir: Path) -> SkillOptApp:
    return SkillOptApp(run_dir.parent, None, refresh_runs=False, poll_interval=0.05, run=run_dir)


def test_console_names_the_step_the_run_directory_names():
    log = ConsoleLogger(io.StringIO())
    log(_start())
    log(_rollout("baseline", -1, "v1"))
    assert log._describe().startswith("baseline 1/3")
    for event in _gated_step(0):
        log(event)
    log(_rollout("train", 1, "t1"))
    assert log._describe().startswith("step 1 train")  # steps/0001, not "step 2/2"
    log(_rollout("test", 2, "x1", role="best"))
    assert log._describe().startswith("test (best)")


def test_a_log_written_before_skill_role_still_reads():
    data = _rollout("test", 2, "x1").to_dict()
    del data["skill_role"]
    feed = RunFeed()
    update = feed.apply([RolloutFinished(**{k: v for k, v in data.items() if k != "type"})])
    assert update.activity == "test"


async def test_test_rollouts_name_their_skill_and_the_footer_says_where_the_run_is(tmp_path):
    run_dir = tmp_path / "runs" / "numbered"
    _write(run_dir, _through_test_phase())
    owner = RunDirectory(run_dir)
    owner.acquire()  # the run is live: its process holds the lock
    try:
        app = _app(run_dir)
        async with app.run_test(size=(100, 30)) as pilot:
            assert await wait_until(
                pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
            )
            table = app.screen.query_one(RolloutsTable)
            rows = [tuple(map(str, table.get_row_at(i)[:2])) for i in range(table.row_count)]
            assert rows[0] == ("—", "baseline")
            assert ("0", "train") in rows and ("1", "gate") in rows
            assert rows[-4:] == [("—", "test (initial)")] * 2 + [("—", "test (best)")] * 2
            footer = str(app.screen.query_one(BudgetFooter).render())
            # (its events are dated 1970: the footer also says how long the run is quiet)
            assert "· test (best) · " in footer and "· 2/2 steps done" in footer, footer
            table.set_filter("best")
            assert [r.skill_role for r in table.rollouts] == ["best", "best"]
            table.set_filter("1")
            assert {(r.phase, r.step) for r in table.rollouts} == {("train", 1), ("gate", 1)}
    finally:
        owner.release()


async def test_header_waits_for_the_whole_baseline(tmp_path):
    run_dir = tmp_path / "runs" / "numbered"
    _write(run_dir, [_start(), _rollout("baseline", -1, "v1", hard=1.0)])
    owner = RunDirectory(run_dir)
    owner.acquire()
    try:
        app = _app(run_dir)
        async with app.run_test(size=(100, 30)) as pilot:
            assert await wait_until(
                pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
            )
            header = lambda: str(app.screen.query_one("#run-header").render())  # noqa: E731
            assert "baseline 1/3…" in header() and "val " not in header()
            assert app.screen.query_one("ScoreChart").baseline is None
            with (run_dir / "events.jsonl").open("a") as fh:
                for v in VAL[1:]:
                    fh.write(json.dumps(_rollout("baseline", -1, v, hard=0.0).to_dict()) + "\n")
            assert await wait_until(pilot, lambda: "val 0.33" in header())
            assert "baseline 1/3" not in header()
            assert abs(app.screen.query_one("ScoreChart").baseline - 1 / 3) < 1e-9
    finally:
        owner.release()
