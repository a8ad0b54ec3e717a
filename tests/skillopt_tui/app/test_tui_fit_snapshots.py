"""Snapshots at 120×40, 80×24 and 60×18 of what issue 40 made fit: Review with a split hunk
and while choosing lines, the run chart (kept, rejected and no-candidate steps: a plot
when tall, a table when short) and the New run dialog with forty configs. Regenerate after
a deliberate layout change with `pytest --snapshot-update` on this file and look at the
SVGs before committing them."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from textual.widgets import Input

from core.skills_repo import Hunk
from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.run import RunScreen
from skillopt_tui.app.widgets.new_run_dialog import NewRunDialog
from skillopt_tui.app.widgets.score_chart import ScoreChart
from tests.support.tui_app import RUNS, SkillsRepoDouble, copy_run, wait_until

SIZES = [
    pytest.param((120, 40), id="120x40"),
    pytest.param((80, 24), id="80x24"),
    pytest.param((60, 18), id="60x18"),
]
# fixed paths: what a snapshot draws must not depend on a temporary directory's name
FIXED = Path(tempfile.gettempdir()) / "skillopt-fit-snapshots"


class SplitRepoDouble(SkillsRepoDouble):
    """The review double whose hunk 1 holds two separate changes (`s` splits it)."""

    def __init__(self, _path: Path | None = None) -> None:
        super().__init__(_path)
        self.hunks[0] = Hunk(
            1,
            "quiz/SKILL.md",
            "@@ -1,7 +1,7 @@",
            [
                " # Quiz skill",
                " ",
                "-Answer the question asked.",
                "+Answer exactly the question asked.",
                " ",
                " ## Format",
                " - Keep answers short.",
                "-- Use plain text.",
                "+- Use plain text, no markdown.",
            ],
            2,
            2,
            1,
            7,
            1,
            7,
        )


def _app(runs: Path = RUNS, **kw) -> SkillOptApp:
    app = SkillOptApp(
        runs,
        runs / "no-such-repo",
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SplitRepoDouble,
        **kw,
    )
    app.animation_level = "none"
    return app


async def _review(pilot) -> None:
    assert await wait_until(pilot, lambda: len(getattr(pilot.app.screen, "runs", [])) >= 1)
    await pilot.press("v")
    assert await wait_until(pilot, lambda: getattr(pilot.app.screen, "loaded", 0) > 0)


@pytest.mark.parametrize("size", SIZES)
def test_review_split(snap_compare, size):
    async def before(pilot) -> None:
        await _review(pilot)
        await pilot.press("s", "y")  # #1.1 approved, #1.2 current
        await pilot.pause(0.1)

    assert snap_compare(_app(), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES)
def test_review_lines(snap_compare, size):
    async def before(pilot) -> None:
        await _review(pilot)
        await pilot.press("j", "j", "space", "j", "space")  # #3: its 2nd line chosen
        await pilot.pause(0.1)

    assert snap_compare(_app(), terminal_size=size, run_before=before)


@pytest.fixture(scope="module")
def mixed_run():
    shutil.rmtree(FIXED / "runs", ignore_errors=True)
    (FIXED / "runs").mkdir(parents=True)
    yield copy_run(FIXED / "runs", "demo-mixed", drop_gates=(4,))
    shutil.rmtree(FIXED / "runs", ignore_errors=True)


@pytest.mark.parametrize("size", SIZES)
def test_chart_kept_rejected_and_no_candidate(snap_compare, mixed_run, size):
    async def before(pilot) -> None:
        assert await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, RunScreen) and pilot.app.screen.updates
        )
        chart = pilot.app.screen.query_one(ScoreChart)
        assert await wait_until(pilot, lambda: len(chart.points) == 6)
        await pilot.pause(0.7)  # the chart redraws at most twice a second

    app = _app(mixed_run.parent, run=mixed_run)
    assert snap_compare(app, terminal_size=size, run_before=before)


@pytest.fixture(scope="module")
def config_root():
    root = FIXED / "configs-root"
    shutil.rmtree(root, ignore_errors=True)
    (root / "configs" / "bench").mkdir(parents=True)
    for i in range(40):
        (root / "configs" / "bench" / f"task-{i:02d}.yaml").write_text("seed: 1\n")
    (root / "configs" / "capitals.yaml").write_text("seed: 1\n")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("size", SIZES)
def test_new_run_with_forty_configs(snap_compare, config_root, size):
    async def before(pilot) -> None:
        assert await wait_until(pilot, lambda: len(getattr(pilot.app.screen, "runs", [])) == 3)
        await pilot.press("n")
        assert await wait_until(pilot, lambda: isinstance(pilot.app.screen, NewRunDialog))
        dialog = pilot.app.screen
        dialog.query_one(Input).cursor_blink = False  # a blinking cursor is no layout
        await pilot.press(*"task-1")
        assert await wait_until(pilot, lambda: len(dialog.shown) == 10)
        await pilot.pause(0.3)

    assert snap_compare(_app(config_root=config_root), terminal_size=size, run_before=before)
