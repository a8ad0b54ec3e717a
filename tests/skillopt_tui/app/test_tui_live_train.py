"""A run started from the TUI (`n`): the real `skillopt train` CLI in a child process on the
scenario of tests/support/train_scenario (its skill-sensitive target double), followed live
through its events.jsonl until it finishes. No timing is assumed: the double holds its first
answer until the test has seen the live run on screen, then the run goes on to the end."""

from __future__ import annotations

import shutil
from pathlib import Path

from core.run.events import StepFinished, read_events
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.new_run_dialog import NewRunDialog
from skillopt_tui.app.widgets.score_chart import ScoreChart
from tests.support.train_scenario import write_config
from tests.support.tui_app import wait_until

REPO = Path(__file__).resolve().parents[3]


async def test_run_started_from_the_tui_is_followed_live(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the child imports the target double
    hold = tmp_path / "hold"
    hold.touch()
    monkeypatch.setenv("SKILLOPT_TEST_HOLD_FILE", str(hold))
    monkeypatch.setenv("SKILLOPT_TEST_CALL_LOG", str(tmp_path / "calls.jsonl"))
    for key in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SKILLOPT_TEST_HANG_AT_CALL",
        "SKILLOPT_TEST_DELAY_S",
    ):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "configs").mkdir()
    shutil.move(write_config(tmp_path), tmp_path / "configs" / "scenario.yaml")
    runs = tmp_path / "runs"
    app = SkillOptApp(runs, refresh_runs=False, poll_interval=0.05, config_root=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        assert await wait_until(pilot, lambda: isinstance(app.screen, NewRunDialog))
        await pilot.press("down", "enter")  # the only config found under ./configs
        assert await wait_until(pilot, lambda: isinstance(app.screen, RunScreen), limit=1000)
        screen = app.screen

        # Live: the screen has read the child's RunStarted while the child is held at its
        # first model call, so no step can be done yet.
        def started() -> bool:
            return screen.header.total_steps == 4 and screen.status.status == "live"

        assert await wait_until(pilot, started, limit=3000), screen.status
        assert screen.steps_done == 0
        hold.unlink()
        assert await wait_until(
            pilot, lambda: screen.status.status in ("finished", "failed"), limit=6000
        )
        process = app.launcher.process
        assert process is not None and process.wait(timeout=30) == 0
        assert screen.status.status == "finished", screen.status
        steps = [
            e.step
            for e in read_events(screen.run_dir / "events.jsonl")
            if isinstance(e, StepFinished)
        ]
        assert screen.steps_done == len(steps) == 4
        assert [p.step for p in screen.query_one(ScoreChart).points] == steps
    assert screen.run_dir.parent == runs
