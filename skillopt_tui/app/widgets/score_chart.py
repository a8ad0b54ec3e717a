"""The step timeline: best val score per step (cyan), the baseline (gray dashes) and each
step's candidate, marked kept (green ●), rejected (red x) or, for a step that had no
candidate to gate, none (yellow ○).

Line and markers are drawn at one resolution, a character cell, so a marker never sits on
a row the line and the axis give another value. Where the canvas has too few rows to tell
scores 0.1 apart, the chart is a table of numbers instead; before any step ends it says so
rather than drawing an axis with nothing on it."""

from __future__ import annotations

from time import monotonic

from rich.table import Table
from rich.text import Text
from textual_plotext import PlotextPlot

from skillopt_tui.app.run_feed import StepPoint

REDRAW_S = 0.5  # at most two redraws a second: a plot costs tens of milliseconds
# the rows plotext keeps from the widget's height for this chart: the title, the frame's
# top and bottom lines and the x tick labels; the rest is the canvas
CHART_FRAME_ROWS = 4
AIM_INTERVALS = 4  # quarters, where the canvas allows
# fewer canvas rows than this and a row spans more than 0.1 of the score: a table instead
MIN_PLOT_ROWS = 11
LINE_MARKER = "·"  # a character-cell marker, like the gate marks (not braille sub-cells)


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
        if not p.accepted and p.gated
    ]
    return kept, rejected  # type: ignore[return-value]


def ungated_marks(points: list[StepPoint]) -> list[tuple[int, float]]:
    """Steps with no candidate (nothing proposed or applied): marked on the best score,
    which they left as it was."""
    return [(p.step, p.best_val) for p in points if not p.gated]


def step_ticks(steps: list[int], most: int = 12) -> list[int]:
    """Whole step numbers to label, at most `most`, always the last one."""
    if len(steps) <= most:
        return steps
    every = len(steps) // most + 1
    picked = steps[::every]
    return picked if picked[-1] == steps[-1] else picked[:-1] + [steps[-1]]


OUTCOMES = {  # (long, short) words, and a style, per outcome
    "kept": ("● kept", "● kept", "green"),
    "rejected": ("x rejected", "x rej", "red"),
    "none": ("○ no candidate", "○ none", "yellow"),
}


def outcome(point: StepPoint) -> str:
    if not point.gated:
        return "none"
    return "kept" if point.accepted else "rejected"


def score_table(baseline: float | None, points: list[StepPoint], rows: int, width: int) -> Table:
    """The newest steps that fit in `rows` × `width`, as numbers: what a plot that small
    would blur. Short words where the width is short, never a cut number."""
    shown = points[-max(rows - 2, 1) :]
    which = f" (last {len(shown)} of {len(points)})" if len(shown) < len(points) else ""
    base = "—" if baseline is None else f"{baseline:.2f}"
    title = f"val per step{which} · baseline {base}"
    if len(title) > width:
        title = f"val{which} · base {base}"
    table = Table(title=title, box=None, padding=(0, 1, 0, 0), title_justify="left")
    narrow = width < 40
    for name in ("step", "best", "cand" if narrow else "candidate", "gate"):
        table.add_column(name, justify="left" if name == "gate" else "right", no_wrap=True)
    for p in shown:
        long, short, style = OUTCOMES[outcome(p)]
        candidate = "—" if p.candidate_score is None else f"{p.candidate_score:.2f}"
        said = Text(short if narrow else long, style)
        table.add_row(str(p.step), f"{p.best_val:.2f}", candidate, said)
    return table


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
        plt.title("val per step · ● kept · x rejected · ○ no candidate")
        plt.ylim(0, 1)
        steps = [p.step for p in self.points]
        if self.baseline is not None:
            plt.plot(steps, [self.baseline] * len(steps), color="gray", marker="-")
        if steps:
            best = [p.best_val for p in self.points]
            plt.plot(steps, best, color="cyan", marker=LINE_MARKER)
            kept, rejected = gate_marks(self.points)
            marks = ((kept, "●", "green"), (rejected, "x", "red"))
            for where, marker, color in (*marks, (ungated_marks(self.points), "○", "yellow")):
                if where:
                    plt.scatter(
                        [m[0] for m in where], [m[1] for m in where], marker=marker, color=color
                    )
            ticks = step_ticks(steps)
            plt.xticks(ticks, [str(t) for t in ticks])
            if len(steps) == 1:  # one step: a range around it, not plotext's 0…1
                plt.xlim(steps[0] - 1, steps[0] + 1)
        self.refresh()

    def render(self):
        """A plot where the canvas can tell scores 0.1 apart, else a table; the y ticks
        follow the height the chart is drawn at (a resize draws again)."""
        canvas_rows = self.size.height - CHART_FRAME_ROWS
        if not self.points:
            base = "—" if self.baseline is None else f"{self.baseline:.2f}"  # as the header
            return Text.assemble(
                ("val per step", "bold"),
                f"\nbaseline {base}\nNo step has ended yet: the chart starts with step 1.",
                style="dim",
            )
        if canvas_rows < MIN_PLOT_ROWS:
            return score_table(self.baseline, self.points, self.size.height, self.size.width)
        ticks = y_ticks(canvas_rows)
        self.plt.yticks(ticks, [f"{t:.2f}" for t in ticks])
        return super().render()
