"""The Compare screen: runs marked on Home (space), compared with c, item by item as
`skillopt compare` prints them; the refusal for runs of different test splits as one line.
The runs are recorded with the scenario's TEST DOUBLE (tests/support/recorded_runs.py)."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, Label

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.screens.compare import CompareScreen
from tests.skillopt_tui.cli.test_train_cmds import skillopt
from tests.support.recorded_runs import record_run
from tests.support.tui_app import wait_until


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    for shape in ("no_edit", "full"):
        record_run(root, shape)
    return root


def _app(runs_dir) -> SkillOptApp:
    app = SkillOptApp(runs_dir, runs_dir / "no-such-repo", refresh_runs=False)
    app.animation_level = "none"
    return app


async def _mark(pilot, *names: str) -> None:
    """Moves the cursor to each named run and marks it with space."""
    home = pilot.app.screen
    assert await wait_until(pilot, lambda: len(home.runs) >= len(names))
    table = home.query_one("#runs", DataTable)
    for name in names:
        table.move_cursor(row=[r.run_id for r in home.runs].index(name), animate=False)
        await pilot.press("space")


async def _compared(pilot) -> CompareScreen:
    assert await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, CompareScreen) and pilot.app.screen.loaded
    )
    return pilot.app.screen


def _cell(home, name: str) -> str:
    row = [r.run_id for r in home.runs].index(name)
    return str(home.query_one("#runs", DataTable).get_row_at(row)[0])


async def test_space_marks_and_unmarks_runs_and_c_wants_two(bench):
    app = _app(bench / "runs")
    async with app.run_test(size=(120, 40)) as pilot:
        home = app.screen
        await _mark(pilot, "full")
        assert [p.name for p in home.marked] == ["full"]
        assert _cell(home, "full") == "● full" and _cell(home, "no_edit") == "no_edit"
        hint = str(home.query_one("#runs-marks", Label).render())
        assert "1 marked (baseline full): mark one more to compare" in hint
        await pilot.press("c")  # one run is not a comparison: a warning, no screen
        await pilot.pause(0.05)
        assert app.screen is home
        assert any("Mark at least two runs" in n.message for n in app._notifications)
        await pilot.press("space")  # unmarks
        assert home.marked == [] and _cell(home, "full") == "full"
        assert not home.query_one("#runs-marks", Label).display
        home.query_one("#skills", DataTable).focus()
        await pilot.press("space")  # on the skills list space marks no run
        assert home.marked == []


async def test_c_compares_the_marked_runs_as_skillopt_compare_prints_them(bench):
    base, full = bench / "runs" / "no_edit", bench / "runs" / "full"
    printed = skillopt(bench, "compare", str(base), str(full))
    assert printed.returncode == 0, printed.stderr
    app = _app(bench / "runs")
    async with app.run_test(size=(120, 40)) as pilot:
        await _mark(pilot, "no_edit", "full")  # the first marked is the baseline
        await pilot.press("c")
        screen = await _compared(pilot)
        assert screen.runs == [base, full]
        shown = str(screen.query_one("#compare-table").render())
        assert shown == printed.stdout.rstrip("\n")  # one engine, one text form
        assert "full     5  0.600  [0.231, 0.882]  +3 -0 =2  0.25" in shown
        assert "x02   0.000    1.000 ▲" in shown
        await pilot.press("s")  # the runs' final skills: the same numbers here
        assert await wait_until(pilot, lambda: screen.loaded == 2)
        assert "final skill, metric hard, against no_edit" in str(
            screen.query_one("#compare-table").render()
        )
        await pilot.press("escape")
        assert await wait_until(pilot, lambda: not isinstance(app.screen, CompareScreen))
        assert len(app.screen.marked) == 2  # the marks stay for the next comparison


async def test_seeds_of_one_config_are_shown_as_mean_and_spread(tmp_path):
    record_run(tmp_path, "full", "seed0", seed=0)
    record_run(tmp_path, "full", "seed1", seed=1)
    app = _app(tmp_path / "runs")
    async with app.run_test(size=(120, 40)) as pilot:
        await _mark(pilot, "seed0", "seed1")
        await pilot.press("c")
        screen = await _compared(pilot)
        (group,) = screen.comparison.seed_groups
        assert group["runs"] == ["seed0", "seed1"]
        shown = str(screen.query_one("#compare-table").render()).splitlines()
        assert shown[-1] == (
            "seeds of one config (seed0, seed1): val 0.600 ± 0.000, test 0.667 ± 0.000 "
            "(mean ± sd over runs)"
        )


@pytest.fixture(scope="module")
def differing_runs(tmp_path_factory):
    """Two runs whose test splits differ: one test item changed under the second."""
    root = tmp_path_factory.mktemp("differing")
    record_run(root, "full", "first")
    second = record_run(root, "no_edit", "second")
    data = root / "data" / "capitals.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    rows[-1]["answer"] = "Kyoto"  # x03
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (second / "card.json").unlink()  # rebuilt from the changed data
    return root / "runs"


async def test_runs_of_different_test_splits_are_refused_in_one_line(differing_runs):
    app = _app(differing_runs)
    async with app.run_test(size=(120, 40)) as pilot:
        await _mark(pilot, "first", "second")
        await pilot.press("c")
        screen = await _compared(pilot)
        problem = str(screen.query_one("#compare-problem", Label).render())
        assert "runs first and second were tested on different test splits" in problem
        assert "\n" not in problem and "Traceback" not in problem
        assert screen.comparison is None and not screen.query_one("#compare-body").display
        assert app.is_running


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("three")
    for shape in ("no_edit", "one_edit", "full"):
        record_run(root, shape)
    return root / "runs"


SIZES = [
    pytest.param((120, 40), id="120x40"),
    pytest.param((80, 24), id="80x24"),
    pytest.param((60, 18), id="60x18"),
]


@pytest.mark.parametrize("size", SIZES)
def test_compare_screen_snapshot(snap_compare, three_runs, size):
    async def before(pilot) -> None:
        await _mark(pilot, "no_edit", "one_edit", "full")
        await pilot.press("c")
        await _compared(pilot)
        await pilot.pause(0.1)

    assert snap_compare(_app(three_runs), terminal_size=size, run_before=before)


def test_refusal_snapshot(snap_compare, differing_runs):
    async def before(pilot) -> None:
        await _mark(pilot, "first", "second")
        await pilot.press("c")
        await _compared(pilot)
        await pilot.pause(0.1)

    assert snap_compare(_app(differing_runs), terminal_size=(60, 18), run_before=before)
