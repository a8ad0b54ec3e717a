"""A live run's screen says what is happening between events: a stop asked for shows in
the header until the run ends, and a call that takes long shows its elapsed time."""

from __future__ import annotations

import json
import sys
import time

from textual.widgets import Static

from core.run.directory import RunDirectory
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.budget_footer import BudgetFooter
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from tests.support.tui_app import SkillsRepoDouble, copy_run, run_app, wait_until

# a stand-in for `skillopt train` finishing its current call: it ignores the first ^C
SLOW_TO_STOP = "import signal, time; signal.signal(signal.SIGINT, lambda *a: None); time.sleep(60)"


def _live_run(tmp_path, *, age_s: float = 0.0):
    """A run with three steps done and no end, its events written `age_s` ago."""
    run = copy_run(tmp_path, "demo-live", steps=3)
    events = run / "events.jsonl"
    now = time.time()
    rows = [json.loads(line) for line in events.read_text().splitlines()]
    last = max(row["ts"] for row in rows)
    for row in rows:
        row["ts"] = now - age_s - (last - row["ts"])
    events.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run


async def test_a_stop_asked_for_shows_in_the_header_until_the_run_ends(tmp_path):
    run = _live_run(tmp_path)
    owner = RunDirectory(run)
    owner.acquire()
    app = run_app(run)
    try:
        app.launcher.start_command([sys.executable, "-c", SLOW_TO_STOP], run)
        async with app.run_test(size=(120, 40)) as pilot:
            assert await wait_until(
                pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
            )
            screen = app.screen
            header = screen.query_one("#run-header", Static)
            assert "live" in str(header.render()) and "stopping" not in str(header.render())
            await pilot.press("x")
            assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.press("y")
            assert await wait_until(pilot, lambda: app.screen is screen)
            await pilot.pause(1.2)  # past a tick of the screen's clock: still said
            assert "stopping after this call" in str(header.render())
            app.launcher.process.kill()
            app.launcher.process.wait()
            owner.release()
            assert await wait_until(
                pilot, lambda: "stopping" not in str(header.render()), limit=300
            )
    finally:
        if app.launcher.alive:
            app.launcher.process.kill()
        owner.release()


async def test_a_long_call_shows_its_elapsed_time(tmp_path):
    run = _live_run(tmp_path, age_s=362)
    owner = RunDirectory(run)
    owner.acquire()
    try:
        app = run_app(run)
        async with app.run_test(size=(120, 40)) as pilot:
            assert await wait_until(
                pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
            )
            footer = app.screen.query_one(BudgetFooter)
            assert await wait_until(pilot, lambda: "call in flight 6m" in str(footer.render()))
    finally:
        owner.release()


async def test_home_and_the_run_header_agree_on_a_partial_baseline(tmp_path):
    """A run that failed two val items into its baseline has no base score on Home; the
    Run header must not show the two items' mean as one (it said 'val 1.00 → —')."""
    run = copy_run(tmp_path, "demo-failed-early", steps=0)
    for name in ("state.json", "summary.json"):
        (run / name).unlink(missing_ok=True)
    events = run / "events.jsonl"
    lines = events.read_text().splitlines()[:3]  # RunStarted and two of five baseline items
    failed = {"type": "RunFailed", "ts": 1795000003.0, "error": "the target went away"}
    events.write_text("\n".join([*lines, json.dumps(failed)]) + "\n")
    app = SkillOptApp(
        run.parent, run.parent / "no-repo", refresh_runs=False, repo_factory=SkillsRepoDouble
    )
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: len(getattr(app.screen, "runs", [])) == 1)
        [row] = app.screen.runs
        assert (row.status, row.baseline_val) == ("failed", None)
        app.open_run(run)
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        header = str(app.screen.query_one("#run-header", Static).render())
    assert "val " not in header and "baseline 2/5" in header, header
