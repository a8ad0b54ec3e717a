"""The gate log keeps its ± column in view at 60×18, whatever the decisions: kept,
rejected, rejected early (no score of its own) and invalid (nothing scored)."""

from __future__ import annotations

import json

from core.run.events import FinalSkillChecked, GateDecided
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.gate_log import GateLog
from tests.support.tui_app import wait_until


def _gate(step: int, score: float | None, scored: int, **kw) -> GateDecided:
    return GateDecided(
        step=step,
        accepted=False,
        best_before=0.6,
        candidate_score=score,
        items_scored=scored,
        items_total=5,
        rollouts_saved=5 - scored,
        items_improved=0,
        items_regressed=2,
        ts=1_795_000_500.0 + step,
        **kw,
    )


def _app_with(run, events) -> SkillOptApp:
    """The app opened on `run` after appending `events` to its event log."""
    with (run / "events.jsonl").open("a") as fh:
        for event in events:
            fh.write(json.dumps(event.to_dict()) + "\n")
    return SkillOptApp(run.parent, None, refresh_runs=False, poll_interval=0.05, run=run)


async def _gate_log(pilot, app) -> GateLog:
    """The Run screen's gate log, once the screen has read the run."""
    assert await wait_until(
        pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.updates > 0
    )
    return app.screen.query_one(GateLog)


async def test_plus_minus_column_fits_at_60x18(copied_run):
    gates = (
        _gate(10, None, 2, at_most=0.4),
        _gate(11, None, 0),
        _gate(12, 0.4, 5),
        _gate(12, 0.2, 5, source="slow_update"),
    )
    app = _app_with(copied_run, gates)
    async with app.run_test(size=(60, 18)) as pilot:
        log = await _gate_log(pilot, app)
        assert await wait_until(pilot, lambda: log.row_count == 6)
        await pilot.pause(0.1)
        rows = [tuple(map(str, log.get_row_at(i))) for i in range(log.row_count)]
        assert rows[-4:] == [
            ("10", "early", "≤0.40", "+0/-2"),  # its bound, not the best
            ("11", "invalid", "0.60", "+0/-2"),
            ("12", "rej", "0.60→0.40", "+0/-2"),
            ("12su", "rej", "0.60→0.20", "+0/-2"),  # the epoch end's slow update
        ]
        # every column, ± included, is inside the visible width: nothing to scroll to
        assert log.virtual_size.width <= log.scrollable_content_region.width


async def test_the_finish_check_is_a_row_of_the_gate_log(copied_run):
    """A final skill that lost to the best (an ungated slow update) was only a console
    line: the Run screen showed nothing of why the result is not the last skill."""
    check = FinalSkillChecked(
        step=4, outcome="rejected", final_val=0.7, best_val=0.8, slow_updates=[1], ts=1.0
    )
    app = _app_with(copied_run, [check])
    async with app.run_test(size=(60, 18)) as pilot:
        log = await _gate_log(pilot, app)
        assert await wait_until(pilot, lambda: log.row_count >= 1)
        last = tuple(map(str, log.get_row_at(log.row_count - 1)))
        assert last == ("final", "rej", "0.80→0.70", "")


async def test_significance_and_merge_rows(copied_run):
    """A higher mean the significance gate rejected reads "ns", not "rej" (issue 39); a
    Pareto merge judged at a step is told apart from the step's own row by "m"."""
    gates = (
        _gate(13, 0.8, 5, p_value=0.0625, items_counted=4),
        _gate(13, 0.7, 5, source="merge"),
    )
    app = _app_with(copied_run, gates)
    async with app.run_test(size=(60, 18)) as pilot:
        log = await _gate_log(pilot, app)
        assert await wait_until(pilot, lambda: log.row_count >= 2)
        await pilot.pause(0.1)
        rows = [tuple(map(str, log.get_row_at(i))) for i in range(log.row_count)]
        assert rows[-2:] == [
            ("13", "ns", "0.60→0.80", "+0/-2"),
            ("13m", "rej", "0.60→0.70", "+0/-2"),
        ]
