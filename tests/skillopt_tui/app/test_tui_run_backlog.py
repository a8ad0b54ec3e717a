"""A run log with a large backlog reaches the Run screen in bounded batches: no update
carries the whole backlog (a key press waits behind one batch at most), nothing is lost,
and a key pressed while the screen is still catching up is answered before it has."""

from __future__ import annotations

import gc
import json

from core.run.events import RolloutFinished, RunStarted
from skillopt_tui.app.screens.run import FREEZE_EVERY_EVENTS, RunScreen
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable
from tests.support.tui_app import run_app, wait_until


def _backlog(run_dir, rollouts: int) -> int:
    start = RunStarted(
        run_id="backlog",
        env="e",
        strategy="s",
        target_model="t",
        optimizer_model="o",
        epochs=1,
        steps_per_epoch=10,
        train_items=100,
        val_items=0,
        test_items=0,
    )
    rows = [start] + [
        RolloutFinished(
            phase="train",
            step=1,
            split="train",
            skill_hash="h",
            item_id=f"item-{n:05d}",
            task_type="qa",
            hard=float(n % 2),
            soft=float(n % 2),
            latency_s=0.3,
            prediction="an answer " * 5,
        )
        for n in range(rollouts)
    ]
    text = "".join(json.dumps(e.to_dict()) + "\n" for e in rows)
    run_dir.mkdir()
    (run_dir / "events.jsonl").write_text(text)
    return len(text.encode())


async def test_a_backlog_arrives_in_bounded_batches_and_keys_go_first(tmp_path):
    run = tmp_path / "backlog"
    size = _backlog(run, 8000)
    assert size > 2_000_000  # megabytes: what a run at 10,000 events/s writes in seconds
    app = run_app(run)
    sizes: list[int] = []
    answered_at: list[int] = []
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(
            pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
        )
        screen = app.screen
        table = screen.query_one(RolloutsTable)
        shown = screen._show

        def counting(update) -> None:
            sizes.append(len(update.rollouts))
            shown(update)

        screen._show = counting
        original_tab = screen.action_tab

        def tab(name: str) -> None:
            answered_at.append(table.total)
            original_tab(name)

        screen.action_tab = tab
        await pilot.press("2")
        assert await wait_until(pilot, lambda: table.total == 8000, limit=500)
    assert answered_at and answered_at[0] < 8000  # the key did not wait for the backlog
    assert max(sizes) < 8000 // 4  # every batch a small part of the backlog


async def test_stored_rollouts_leave_the_collectors_scans_until_the_screen_goes(tmp_path):
    """A full garbage collection walks every object the collector tracks: with every
    stored rollout among them, each one froze the screen for up to a second at 10,000
    events/s. The rows the screen keeps are frozen out of its scans, and given back when
    the screen goes (what it held may be garbage then)."""
    run = tmp_path / "backlog"
    _backlog(run, FREEZE_EVERY_EVENTS + 2000)
    app = run_app(run)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await wait_until(pilot, lambda: isinstance(app.screen, RunScreen))
        table = app.screen.query_one(RolloutsTable)
        assert await wait_until(pilot, lambda: table.total == FREEZE_EVERY_EVENTS + 2000, limit=500)
        scanned = {id(o) for o in gc.get_objects()}
        assert not [r for r in table.all[:FREEZE_EVERY_EVENTS] if id(r) in scanned]
    assert gc.get_freeze_count() == 0
