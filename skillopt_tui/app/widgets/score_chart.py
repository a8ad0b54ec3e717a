"""The step timeline: best val score per step (cyan), the baseline (gray dashes) and each
gate's candidate score, marked kept (green ●) or rejected (red x)."""

from __future__ import annotations

from time import monotonic

from textual_plotext import PlotextPlot

from skillopt_tui.app.run_feed import StepPoint

REDRAW_S = 0.5  # at most two redraws a second: a plot costs tens of milliseconds
# the rows plotext keeps from the widget's height for this chart: the title, the frame's
# top and bottom lines and the x tick labels; the rest is the canvas
CHART_FRAME_ROWS = 4
AIM_INTERVALS = 4  # quarters, where the canvas allows


def y_ticks(canvas_rows: int) -> list[float]:
    """Ticks on [0, 1] that each fall exactly on a canvas row, evenly spaced: plotext puts a
    value on the row nearest to it, so a tick between rows would be drawn on a row that
    holds other values (at four rows, 0.25 on the row of 0.33, with 0.40 drawn there). The
    spacing divides the height into the number of intervals nearest to four (at least two:
    a prime height labels every row rather than only the ends)."""
    gaps = canvas_rows - 1
    if gaps < 2:
        return [0.0, 1.0]
    intervals = min(
        (n for n in range(2, gaps + 1) if gaps % n == 0),
        key=lambda n: (abs(n - AIM_INTERVALS), -n),
    )
    return [k / intervals for k in range(intervals + 1)]


def gate_marks(
    points: list[StepPoint],
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """(kept, rejected) marks as (step, y). A candidate rejected early has no score of its
    own: its x sits on the best score it could not beat, so every rejection is marked."""
    kept = [
        (p.step, p.candidate_score) for p in points if p.accepted and p.candidate_score is not None
    ]
    rejected = [
        (p.step, p.candidate_score if p.candidate_score is not None else p.best_val)
        for p in points
        if not p.accepted
    ]
    return kept, rejected  # type: ignore[return-value]


class ScoreChart(PlotextPlot):
    """Redrawn from the whole timeline; plotext output depends only on the data and the
    size, so snapshots are stable. A change right after a redraw waits (REDRAW_S) and is
    drawn together with whatever follows it, so a fast run cannot make the chart the
    bottleneck."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.baseline: float | None = None
        self.points: list[StepPoint] = []
        self._last_draw = float("-inf")
        self._draw_pending = False

    def on_mount(self) -> None:
        super().on_mount()
        self._draw()
        self._last_draw = float("-inf")  # the empty frame does not delay the first data

    def set_data(self, baseline: float | None, points: list[StepPoint]) -> None:
        self.baseline = baseline
        self.points = points
        wait = self._last_draw + REDRAW_S - monotonic()
        if wait <= 0:
            self._draw()
        elif not self._draw_pending:
            self._draw_pending = True
            self.set_timer(wait, self._draw)

    def _draw(self) -> None:
        self._draw_pending = False
        self._last_draw = monotonic()
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("val per step · ● kept · x rejected")
        plt.ylim(0, 1)
        steps = [p.step for p in self.points]
        xs = steps or [0, 1]
        if self.baseline is not None:
            plt.plot(xs, [self.baseline] * len(xs), color="gray", marker="-")
        if steps:
            plt.plot(steps, [p.best_val for p in self.points], color="cyan", marker="braille")
            kept, rejected = gate_marks(self.points)
            for marks, marker, color in ((kept, "●", "green"), (rejected, "x", "red")):
                if marks:
                    plt.scatter(
                        [m[0] for m in marks], [m[1] for m in marks], marker=marker, color=color
                    )
            plt.xticks(steps if len(steps) <= 12 else steps[:: len(steps) // 12 + 1])
        self.refresh()

    def render(self):
        """The y ticks follow the height the chart is drawn at (a resize draws again)."""
        ticks = y_ticks(self.size.height - CHART_FRAME_ROWS)
        self.plt.yticks(ticks, [f"{t:.2f}" for t in ticks])
        return super().render()
