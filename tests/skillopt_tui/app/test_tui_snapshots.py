"""Snapshots of every screen at 80×24 and 120×40 from fixed data: the recorded runs and a
double of the skills repo with fixed shas and dates. Regenerate after a deliberate layout
change with `pytest --snapshot-update tests/skillopt_tui/app/test_tui_snapshots.py` and
look at the SVGs before committing them."""

from __future__ import annotations

import pytest

from skillopt_tui.app.app import SkillOptApp
from tests.support.tui_app import RUNS, SkillsRepoDouble, wait_until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
NARROW = pytest.param((60, 18), id="60x18")


def _app(**kw) -> SkillOptApp:
    app = SkillOptApp(
        RUNS,
        RUNS / "no-such-repo",
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
        **kw,
    )
    app.animation_level = "none"
    return app


async def _home(pilot) -> None:
    assert await wait_until(
        pilot,
        lambda: (
            len(getattr(pilot.app.screen, "runs", [])) == 3 and pilot.app.screen.overview.skills
        ),
    )


async def _run(pilot) -> None:
    assert await wait_until(pilot, lambda: getattr(pilot.app.screen, "updates", 0) > 0)
    await pilot.pause(0.1)


async def _review(pilot) -> None:
    await _home(pilot)
    await pilot.press("v")
    assert await wait_until(pilot, lambda: getattr(pilot.app.screen, "loaded", 0) > 0)
    await pilot.press("y", "n")  # hunk 1 approved, hunk 2 rejected, 3 current


async def _history(pilot) -> None:
    await _home(pilot)
    await pilot.press("h")
    assert await wait_until(pilot, lambda: getattr(pilot.app.screen, "loaded", 0) > 0)
    await pilot.press("d")
    await pilot.pause(0.2)


@pytest.mark.parametrize("size", SIZES)
def test_home(snap_compare, size):
    assert snap_compare(_app(), terminal_size=size, run_before=_home)


@pytest.mark.parametrize("size", SIZES)
def test_run_replay(snap_compare, size):
    assert snap_compare(_app(run=RUNS / "demo-finished"), terminal_size=size, run_before=_run)


@pytest.mark.parametrize("size", [*SIZES, NARROW])
def test_review(snap_compare, size):
    assert snap_compare(_app(), terminal_size=size, run_before=_review)


@pytest.mark.parametrize("size", SIZES)
def test_history(snap_compare, size):
    assert snap_compare(_app(), terminal_size=size, run_before=_history)


def test_run_candidate_tab(snap_compare):
    async def before(pilot) -> None:
        await _run(pilot)
        await pilot.press("3")

    assert snap_compare(_app(run=RUNS / "demo-finished"), terminal_size=(80, 24), run_before=before)


@pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), NARROW])
def test_adopt_confirmation(snap_compare, size):
    async def before(pilot) -> None:
        await _review(pilot)
        await pilot.press("y", "A")
        await pilot.pause(0.1)

    assert snap_compare(_app(), terminal_size=size, run_before=before)


def test_review_choosing_lines(snap_compare):
    """Hunk 3 being chosen line by line: the cursor, the chosen line, the status line."""

    async def before(pilot) -> None:
        await _review(pilot)
        await pilot.press("space", "j", "space")
        await pilot.pause(0.1)

    assert snap_compare(_app(), terminal_size=(80, 24), run_before=before)
