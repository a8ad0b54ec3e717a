"""The Run screen's live feed can be paused (`p`): the rollouts table holds still while the
run goes on, says how many rows came, and `p` again shows them marked; `s` sorts the table
by a column (issue 40). Snapshots at 120×40, 80×24 and 60×18 of a resumed, sorted table.
Regenerate after a deliberate change with `pytest --snapshot-update` on this file and look
at the SVGs before committing them."""

from __future__ import annotations

import json

import pytest

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.rollouts_table import RolloutsTable
from tests.support.tui_app import RUNS, copy_run, run_app, wait_until

SIZES = [
    pytest.param((120, 40), id="120x40"),
    pytest.param((80, 24), id="80x24"),
    pytest.param((60, 18), id="60x18"),
]


def _step_two() -> str:
    """The recorded run's step 2 events, as the run would append them."""
    lines = (RUNS / "demo-finished" / "events.jsonl").read_text().splitlines()
    return "".join(line + "\n" for line in lines if json.loads(line).get("step") == 2)


def _app(run) -> SkillOptApp:
    app = run_app(run)
    app.animation_level = "none"
    return app


def _count(screen) -> str:
    return str(screen.query_one("#rollouts-count").render())


async def _pause_append_resume(pilot, run) -> RolloutsTable:
    app = pilot.app
    assert await wait_until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates)
    screen = app.screen
    table = screen.query_one(RolloutsTable)
    assert await wait_until(pilot, lambda: table.total == 14)  # baseline 5, step 1: 4 + 5
    await pilot.press("p")
    with (run / "events.jsonl").open("a") as fh:
        fh.write(_step_two())
    assert await wait_until(pilot, lambda: table.held is not None and len(table.held) == 9)
    assert table.row_count == 14  # held still while the run went on
    await pilot.pause(0.1)
    assert "paused: 9 new (p shows them)" in _count(screen)
    await pilot.press("p")
    return table


async def test_p_holds_the_rollouts_and_p_again_shows_the_new_ones_marked(tmp_path):
    run = copy_run(tmp_path, "demo-live", steps=1)
    app = _app(run)
    async with app.run_test(size=(100, 30)) as pilot:
        table = await _pause_append_resume(pilot, run)
        assert table.row_count == 23 and len(table.fresh) == 9
        assert {id(r) for r in table.rollouts[14:]} == table.fresh  # the last 9 are marked
        assert "9 new rows marked" in _count(app.screen)


@pytest.mark.parametrize("size", SIZES)
def test_resumed_and_sorted(snap_compare, tmp_path, size):
    run = copy_run(tmp_path, "demo-live", steps=1)

    async def before(pilot) -> None:
        await _pause_append_resume(pilot, run)
        await pilot.press("s", "s", "s", "s", "S")  # score, highest first
        await pilot.pause(0.2)

    assert snap_compare(_app(run), terminal_size=size, run_before=before)
