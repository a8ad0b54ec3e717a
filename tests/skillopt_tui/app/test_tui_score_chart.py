"""The score chart's y-axis labels agree with where values are drawn, at every size: the
labels are evenly spaced by row (each sits on the row its value maps to), and a value is
drawn within half a row of what the axis says there. At 60×18 the chart has four rows and
quarter ticks read 1.00/0.75/0.25/0.00, with 0.40 on the row labelled 0.25."""

from __future__ import annotations

import pytest

from skillopt_tui.app.app import SkillOptApp
from skillopt_tui.app.widgets.score_chart import ScoreChart, y_ticks
from tests.support.tui_app import RUNS, SkillsRepoDouble, wait_until

SIZES = [(60, 18), (80, 24), (120, 40)]


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
        rows = [row for row, line in enumerate(canvas) if line[col] in "x●"]
        if rows:
            marks[step] = rows[0]
    return labels, marks, dict(enumerate(canvas))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_each_value_sits_on_the_row_of_its_nearest_label(size):
    app = SkillOptApp(
        RUNS,
        RUNS / "no-such-repo",
        run=RUNS / "demo-finished",
        refresh_runs=False,
        poll_interval=0.05,
        repo_factory=SkillsRepoDouble,
    )
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
