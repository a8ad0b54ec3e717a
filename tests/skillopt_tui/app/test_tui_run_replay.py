"""Replaying a run shows everything it did: every rollout (not the last 60), filterable by
phase and step; a placeholder before the first reflection; keys named as the tabs are."""

from __future__ import annotations

import json
from pathlib import Path

from core.run.events import ReflectionText, RolloutFinished
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.run_feed import StepPoint
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.diff_view import DiffView
from skillopt_tui.app.widgets.help_screen import HelpScreen
from skillopt_tui.app.widgets.reflection_log import ReflectionLog
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable
from skillopt_tui.app.widgets.score_chart import gate_marks
from tests.support.tui_app import RUNS, wait_until


def _app(run: Path) -> SkillOptApp:
    return SkillOptApp(run.parent, None, run=run, refresh_runs=False, poll_interval=0.05)


def _rollout(phase: str, step: int, n: int) -> RolloutFinished:
    return RolloutFinished(
        phase=phase,
        step=step,
        split="val",
        skill_hash="h",
        item_id=f"q-{phase}-{step}-{n}",
        task_type="qa",
        hard=1.0,
        soft=1.0,
        latency_s=0.1,
    )


async def test_every_rollout_of_a_long_run_is_shown_and_filterable(copied_run):
    with (copied_run / "events.jsonl").open("a", encoding="utf-8") as fh:
        for step in range(3, 8):
            for n in range(60):
                fh.write(json.dumps(_rollout("gate", step, n).to_dict()) + "\n")
    app = _app(copied_run)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        table = app.screen.query_one(RolloutsTable)
        assert await wait_until(pilot, lambda: table.total >= 300)
        assert table.row_count == table.total  # nothing dropped
        phases = {r.phase for r in table.rollouts}
        assert "baseline" in phases and "train" in phases
        await pilot.press("f", *"gate 5", "enter")
        assert table.row_count == 60
        assert {(r.phase, r.step) for r in table.rollouts} == {("gate", 5)}
        assert "60 of" in str(app.screen.query_one("#rollouts-count").render())
        await pilot.press("f", "ctrl+u", "enter")  # empty filter: everything again
        assert table.row_count == table.total


async def test_reflection_tab_has_a_placeholder_and_keys_name_the_tabs(copied_run):
    events = copied_run / "events.jsonl"
    kept = [ln for ln in events.read_text().splitlines() if "ReflectionText" not in ln]
    events.write_text("\n".join(kept) + "\n")
    app = _app(copied_run)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        screen = app.screen
        await pilot.press("2")
        await pilot.pause()
        log = screen.query_one(ReflectionLog)
        assert log.seen == 0
        assert "No reflection yet" in "\n".join(line.text for line in log.lines)
        await pilot.press("question_mark")
        assert await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        names = {str(cell) for cell in app.screen.table.columns[1].cells}
        tabs = {"Rollouts", "Reflection", "Candidate"}  # as the tab titles say
        assert tabs <= names and not {"Reflect", "Diff"} & names


async def test_reflections_wrap_at_the_window_width_not_78(copied_run):
    long = ReflectionText(step=3, kind="failure", group=0, text="the target guessed " * 30)
    with (copied_run / "events.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(long.to_dict()) + "\n")
    app = _app(copied_run)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        await pilot.press("2")
        log = app.screen.query_one(ReflectionLog)
        assert await wait_until(pilot, lambda: any("guessed" in ln.text for ln in log.lines))
        widest = max(len(ln.text.rstrip()) for ln in log.lines if "guessed" in ln.text)
        assert widest > 90


async def test_a_stopped_run_offers_resume_and_shows_the_command(copied_run):
    app = _app(copied_run)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        screen = app.screen
        assert screen.status.status == "interrupted"
        assert screen.check_action("resume", ()) is True
        await pilot.press("r")
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        body = str(app.screen.body)
        assert f"train --config {copied_run / 'config.yaml'} --out {copied_run}" in body
        await pilot.press("n")  # not started: nothing runs
        assert await wait_until(pilot, lambda: app.screen is screen)
        assert not app.launcher.alive


async def test_a_finished_run_offers_no_resume():
    app = _app(RUNS / "demo-finished")
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        assert app.screen.check_action("resume", ()) is False


def test_an_early_reject_gets_a_mark_on_the_chart():
    points = [
        StepPoint(1, 1, 0.6, 0.6, True, 0.5, 0.0),
        StepPoint(2, 1, 0.6, None, False, 0.5, 0.0),  # rejected early: no score of its own
        StepPoint(3, 1, 0.6, 0.4, False, 0.5, 0.0),
    ]
    kept, rejected = gate_marks(points)
    assert kept == [(1, 0.6)]
    assert rejected == [(2, 0.6), (3, 0.4)]


async def test_candidate_tab_steps_through_every_candidate_with_its_gate():
    app = _app(RUNS / "demo-finished")
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        screen = app.screen
        assert len(screen.candidates) == 6 and screen.candidate_pos == 5
        await pilot.press("3")
        body = str(screen.query_one(DiffView)._body.render())
        assert "step 6" in body and "candidate 6/6" in body and "rejected 1.00→0.80" in body
        await pilot.press("comma", "comma", "comma")
        body = str(screen.query_one(DiffView)._body.render())
        assert "step 3" in body and "candidate 3/6" in body and "kept 0.60→0.80" in body
