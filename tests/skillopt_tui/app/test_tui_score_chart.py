"""The score chart's y-axis labels agree with where values are drawn, at every size: the
labels are evenly spaced by row (each sits on the row its value maps to), and a value is
drawn within half a row of what the axis says there. At 60×18 the chart has four rows and
quarter ticks read 1.00/0.75/0.25/0.00, with 0.40 on the row labelled 0.25."""

from __future__ import annotations

import pytest

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.widgets.score_chart import ScoreChart, y_ticks
from tests.support.tui_app import RUNS, copy_run, run_app, wait_until

SIZES = [(60, 18), (80, 24), (120, 40)]
PLOTTED = [(120, 40), (90, 50)]  # tall enough to tell scores 0.1 apart: a plot
TABLED = [(60, 18), (80, 24)]  # a row would span more than 0.1: a table of numbers


def _chart_lines(app: SkillOptApp) -> list[str]:
    chart = app.screen.query_one(ScoreChart)
    strips = app.screen._compositor.render_strips()
    region = chart.region
    return [strip.text[region.x : region.right] for strip in strips[region.y : region.bottom]]


def _read(lines: list[str]) -> tuple[dict[int, float], dict[int, int], dict[int, str]]:
    """({canvas row: its label}, {step: canvas row of its gate mark}, {canvas row: text})."""
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    canvas = lines[top + 1 : bottom]
    labels = {row: float(line.split("┤")[0]) for row, line in enumerate(canvas) if "┤" in line}
    columns = [col for col, char in enumerate(lines[bottom]) if char == "┬"]
    marks = {}
    for step, col in enumerate(columns, start=1):
        rows = [row for row, line in enumerate(canvas) if line[col] in "x●○"]
        if rows:
            marks[step] = rows[0]
    return labels, marks, dict(enumerate(canvas))


@pytest.mark.parametrize("size", PLOTTED, ids=[f"{w}x{h}" for w, h in PLOTTED])
async def test_each_value_sits_on_the_row_of_its_nearest_label(size):
    app = run_app(RUNS / "demo-finished")
    async with app.run_test(size=size) as pilot:
        assert await wait_until(pilot, lambda: getattr(app.screen, "updates", 0) > 0)
        chart = app.screen.query_one(ScoreChart)
        assert await wait_until(pilot, lambda: len(chart.points) == 6)
        await pilot.pause(0.6)  # the chart redraws at most twice a second
        labels, marks, canvas = _read(_chart_lines(app))
        values = {p.step: p.candidate_score for p in chart.points}
        baseline_row = next(row for row, text in canvas.items() if "---" in text)
    assert min(labels.values()) == 0.0 and max(labels.values()) == 1.0, labels
    top, bottom = min(labels), max(labels)
    per_row = (labels[top] - labels[bottom]) / (bottom - top)  # value of one row

    def axis(row: int) -> float:
        return labels[bottom] + (bottom - row) * per_row

    for row, label in labels.items():  # labels print two decimals
        assert abs(label - axis(row)) <= 0.005 + 1e-9, f"labels {labels} not even at {size}"
    drawn = [(values[step], row) for step, row in marks.items()] + [(0.4, baseline_row)]
    for value, row in drawn:
        assert abs(value - axis(row)) <= per_row / 2 + 1e-9, (
            f"{value} drawn where the axis reads {axis(row):.2f} at {size}; labels {labels}"
        )


@pytest.mark.parametrize("rows", range(1, 30))
def test_every_tick_falls_on_a_row_and_the_ticks_are_evenly_spaced(rows):
    ticks = y_ticks(rows)
    assert ticks[0] == 0.0 and ticks[-1] == 1.0
    gaps = {round(b - a, 9) for a, b in zip(ticks[:-1], ticks[1:], strict=True)}
    assert len(gaps) == 1
    for tick in ticks:
        row = tick * max(rows - 1, 1)
        assert abs(row - round(row)) < 1e-9


async def _chart(pilot, app, steps: int) -> list[str]:
    assert await wait_until(pilot, lambda: getattr(app.screen, "updates", 0) > 0)
    chart = app.screen.query_one(ScoreChart)
    assert await wait_until(pilot, lambda: len(chart.points) == steps)
    await pilot.pause(0.6)
    return _chart_lines(app)


async def test_a_step_without_a_candidate_has_its_own_marker(tmp_path):
    run = copy_run(tmp_path, "demo-mixed", drop_gates=(4,))
    app = run_app(run)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await _chart(pilot, app, 6)
    labels, marks, canvas = _read(lines)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    column = [col for col, char in enumerate(lines[bottom]) if char == "┬"][3]
    assert canvas[marks[4]][column] == "○"  # not the rejected x
    assert "○ no candidate" in "".join(lines)


async def test_line_and_markers_share_one_resolution_and_steps_are_whole(tmp_path):
    app = run_app(copy_run(tmp_path, "demo-run"))
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await _chart(pilot, app, 6)
    braille = [ch for line in lines for ch in line if 0x2800 <= ord(ch) <= 0x28FF]
    assert not braille, "the line is drawn finer than the markers"
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    assert lines[bottom + 1].split() == ["1", "2", "3", "4", "5", "6"]


async def test_one_step_has_whole_step_labels(tmp_path):
    app = run_app(copy_run(tmp_path, "demo-one", steps=1))
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await _chart(pilot, app, 1)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    assert lines[bottom + 1].split() == ["1"]


async def test_before_any_step_no_axis_is_claimed(tmp_path):
    app = run_app(copy_run(tmp_path, "demo-none", steps=0))
    async with app.run_test(size=(120, 40)) as pilot:
        assert await wait_until(pilot, lambda: getattr(app.screen, "updates", 0) > 0)
        await pilot.pause(0.6)
        text = "\n".join(_chart_lines(app))
    assert "No step has ended yet" in text
    assert "0.00" not in text and "└" not in text


@pytest.mark.parametrize("size", TABLED, ids=[f"{w}x{h}" for w, h in TABLED])
async def test_a_short_chart_is_a_table_of_numbers(tmp_path, size):
    app = run_app(copy_run(tmp_path, "demo-mixed", drop_gates=(4,)))
    async with app.run_test(size=size) as pilot:
        lines = await _chart(pilot, app, 6)
    rows = [line.split() for line in lines]
    assert "┌" not in "".join(lines)
    assert any(r[:2] == ["step", "best"] for r in rows)
    table = {r[0]: r[1:4] for r in rows if r and r[0].isdigit()}
    assert table["2"] == ["0.60", "0.40", "x"] and table["4"] == ["0.80", "—", "○"]
    assert table["5"] == ["1.00", "1.00", "●"]
    assert "baseline 0.40" in lines[0] or "base 0.40" in lines[0]
