"""Run screen keys: the rollouts table has focus from the start (Enter/↑/↓/t act on it),
and `x Stop run` asks first and leaves the footer when the launched process ends."""

from __future__ import annotations

import signal
import subprocess

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.messages import TrainExited
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable
from skillopt_tui.app.widgets.trajectory_screen import TrajectoryScreen
from tests.support.tui_app import RUNS, wait_until


def _app(**kw) -> SkillOptApp:
    return SkillOptApp(RUNS, None, refresh_runs=False, poll_interval=0.05, **kw)


def _footer_text(screen) -> str:
    return " ".join(str(w.render()) for w in screen.query("FooterKey"))


async def test_rollouts_table_has_focus_and_enter_opens_the_selected_row():
    app = _app(run=RUNS / "demo-finished")
    async with app.run_test(size=(80, 24)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        screen = app.screen
        table = screen.query_one(RolloutsTable)
        assert screen.focused is table
        last = table.row_count - 1
        assert table.cursor_row == last
        await pilot.press("up", "up")
        assert table.cursor_row == last - 2
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: isinstance(app.screen, TrajectoryScreen))
        assert app.screen.rollout is table.rollout_at(last - 2)


async def test_failed_run_keeps_its_baseline_on_screen():
    app = _app(run=RUNS / "demo-failed")
    async with app.run_test(size=(120, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        assert app.screen.status.status == "failed"
        assert app.screen.status.baseline_val is not None
        assert "val " in str(app.screen.query_one("#run-header").render())


async def test_stop_key_leaves_when_the_launched_process_exits():
    run_dir = RUNS / "demo-partial"
    app = _app(run=run_dir)
    # stands in for a launched trainer: a real child process we end ourselves
    app.launcher.process = subprocess.Popen(["sleep", "30"])
    app.launcher.run_dir = run_dir
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            assert await wait_until(
                pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
            )
            screen = app.screen
            assert await wait_until(
                pilot, lambda: screen.focused is not None and "Stop run" in _footer_text(screen)
            )
            await pilot.pause(0.2)  # settled: nothing else refreshes the footer from here
            app.launcher.process.terminate()
            app.launcher.process.wait(timeout=10)
            app.post_message(TrainExited(-15, ""))
            assert await wait_until(pilot, lambda: "Stop run" not in _footer_text(screen))
    finally:
        if app.launcher.process.poll() is None:
            app.launcher.process.kill()


async def test_stopping_a_live_run_asks_first_with_the_key_sleep_uses():
    """`s` opens Sleep on Home, so it stops nothing here; `x` (as Sleep's Stop night) asks,
    and only Yes sends the stop."""
    run_dir = RUNS / "demo-partial"
    app = _app(run=run_dir)
    app.launcher.process = subprocess.Popen(["sleep", "30"])  # a live child standing in
    app.launcher.run_dir = run_dir
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            assert await wait_until(
                pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
            )
            screen = app.screen
            assert await wait_until(pilot, lambda: "x Stop run" in _footer_text(screen))
            await pilot.press("s")
            await pilot.pause(0.2)
            assert app.launcher.alive and app.screen is screen
            await pilot.press("x")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            assert "next step boundary" in str(app.screen.body)
            await pilot.press("n")
            assert await wait_until(pilot, lambda: app.screen is screen)
            await pilot.pause(0.2)
            assert app.launcher.alive
            await pilot.press("x")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.press("y")
            process = app.launcher.process
            assert await wait_until(pilot, lambda: process.poll() is not None)
        assert process.returncode == -signal.SIGINT
    finally:
        if app.launcher.process.poll() is None:
            app.launcher.process.kill()
