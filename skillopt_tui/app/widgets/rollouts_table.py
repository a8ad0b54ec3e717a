"""Every rollout of the run, live or replayed; Enter on a row asks for its trajectory.

Nothing is dropped, and nothing is built per row but the row's data: the table draws only
the rows on screen, so a run of a million rollouts scrolls as cheaply as one of ten. A
filter (`f`: phase names and step numbers, e.g. "gate 3" or "baseline") narrows the rows
without losing the others. `s` (or a click on a column's header) sorts by a column, `S`
reverses; a live table can be paused (`hold`) to read it still, and the rows that came
meanwhile are marked when it resumes.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from core.run.events import RolloutFinished
from skillopt_tui.run_words import rollout_phase, rollout_step, step_cell


def _cells(r: RolloutFinished) -> tuple[str, ...]:
    return (
        step_cell(r),
        rollout_phase(r),
        r.item_id,
        f"{r.hard:.2f}",
        f"{r.latency_s:.1f}s",
        f"{r.input_tokens}+{r.output_tokens}" + (" cut" if r.truncated else ""),
    )


@dataclass(frozen=True)
class RolloutFilter:
    """Words are phases (any of them matches), numbers are steps (any of them matches)."""

    phases: frozenset[str] = frozenset()
    steps: frozenset[int] = frozenset()

    @classmethod
    def parse(cls, text: str) -> RolloutFilter:
        words = text.lower().replace(",", " ").split()
        steps = frozenset(int(w) for w in words if w.isdigit())
        phases = frozenset(w for w in words if not w.isdigit() and w != "step")
        return cls(phases, steps)

    def matches(self, r: RolloutFinished) -> bool:
        name = rollout_phase(r)
        if self.phases and not any(p in r.phase.lower() or p in name for p in self.phases):
            return False
        return not self.steps or rollout_step(r) in self.steps

    def __str__(self) -> str:
        return " ".join([*sorted(self.phases), *map(str, sorted(self.steps))])


COLUMNS = ("step", "phase", "item", "score", "latency", "tokens")
# What each column sorts by (the cells are text: "10" must come after "9", "—" first)
SORT_KEYS: tuple[Callable[[RolloutFinished], object], ...] = (
    lambda r: -1 if rollout_step(r) is None else rollout_step(r),
    rollout_phase,
    lambda r: r.item_id,
    lambda r: r.hard,
    lambda r: r.latency_s,
    lambda r: r.input_tokens + r.output_tokens,
)


class RolloutsTable(ScrollView, can_focus=True):
    """A virtual table: adding a batch only appends to a list and widens the columns it
    needs; rows are formatted when drawn, and only the rows on screen are drawn. At
    10,000 events/s the screen stays responsive (a DataTable built every row object as it
    arrived). The header row stays in place while the rows scroll under it."""

    DEFAULT_CSS = """
    RolloutsTable { height: 1fr; }
    RolloutsTable > .rollouts--header { text-style: bold; background: $panel; }
    RolloutsTable > .rollouts--cursor { background: $accent 50%; }
    RolloutsTable:focus > .rollouts--cursor { background: $accent; }
    RolloutsTable > .rollouts--odd { background: $boost; }
    RolloutsTable > .rollouts--new { background: $success 25%; }
    """
    COMPONENT_CLASSES = {
        "rollouts--header",
        "rollouts--cursor",
        "rollouts--odd",
        "rollouts--new",
    }
    BINDINGS = [
        Binding("down", "cursor(1)", show=False),
        Binding("up", "cursor(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("home", "edge(0)", show=False),
        Binding("end", "edge(1)", show=False),
        Binding("enter", "select", show=False),
        Binding(
            "s",
            "sort",
            "Sort",
            show=False,
            tooltip="Sort by the next column (a click on a header too)",
        ),
        Binding("S", "reverse", "Reverse", show=False, tooltip="Reverse the sort order"),
    ]

    class RowSelected(Message):
        """Enter on a row (the run screen opens its trajectory)."""

        def __init__(self, table: RolloutsTable, row: int) -> None:
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> RolloutsTable:
            return self.table

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.all: list[RolloutFinished] = []  # every rollout seen
        self.rollouts: list[RolloutFinished] = []  # the rows shown (filtered)
        self.filter = RolloutFilter()
        self.cursor_row = 0
        self.sort_column: int | None = None  # None: in the order they came
        self.descending = False
        self._sort_keys: list[object] = []  # each shown row's key, while sorted (bisect)
        self.held: list[RolloutFinished] | None = None  # rows that came while paused
        self.fresh: set[int] = set()  # id() of the rows a resume brought in: marked
        self._widths = [len(c) for c in COLUMNS]

    @property
    def total(self) -> int:
        return len(self.all)

    @property
    def row_count(self) -> int:
        return len(self.rollouts)

    def get_row_at(self, row: int) -> tuple[str, ...]:
        return _cells(self.rollouts[row])

    def rollout_at(self, row: int) -> RolloutFinished | None:
        return self.rollouts[row] if 0 <= row < len(self.rollouts) else None

    # -- rows in ------------------------------------------------------------------------

    def add_rollouts(self, rollouts: list[RolloutFinished]) -> None:
        """Appends a batch (held while paused); follows the tail unless the user moved the
        cursor up. Sorted, each row goes where it sorts and the cursor stays on its row."""
        if not rollouts:
            return
        if self.held is not None:
            self.held.extend(rollouts)
            return
        self.all.extend(rollouts)
        shown = [r for r in rollouts if self.filter.matches(r)]
        if not shown:
            return
        self._widen(shown)
        if self.sort_column is not None:
            self._insert_sorted(shown)
            return
        following = not self.rollouts or self.cursor_row >= len(self.rollouts) - 1
        self.rollouts.extend(shown)
        self._resize()
        if following:
            self.move_cursor(row=len(self.rollouts) - 1)
        else:
            self.refresh()

    def _key(self, r: RolloutFinished) -> object:
        assert self.sort_column is not None
        key = SORT_KEYS[self.sort_column](r)
        return _Reversed(key) if self.descending else key

    def _insert_sorted(self, rows: list[RolloutFinished]) -> None:
        """Each row after its equals (ties keep the order they came in)."""
        current = self.rollout_at(self.cursor_row)
        for r in rows:
            key = self._key(r)
            at = bisect.bisect_right(self._sort_keys, key)
            self._sort_keys.insert(at, key)
            self.rollouts.insert(at, r)
            if current is not None and at <= self.cursor_row:
                self.cursor_row += 1  # the cursor stays on the row it was on
        self._resize()
        self.move_cursor(row=self.cursor_row)  # and in view

    # -- sorting ------------------------------------------------------------------------

    def sort_by(self, column: int | None, descending: bool = False) -> None:
        """Sorts the shown rows by `column` (None: the order they came in); the cursor
        stays on its row."""
        current = self.rollout_at(self.cursor_row)
        self.sort_column, self.descending = column, descending
        self._show_rows()
        if current is not None:
            self.move_cursor(row=self._row_of(current))

    def action_sort(self) -> None:
        following = 0 if self.sort_column is None else self.sort_column + 1
        self.sort_by(following if following < len(COLUMNS) else None)

    def action_reverse(self) -> None:
        self.sort_by(self.sort_column or 0, not self.descending)

    def on_click(self, event: events.Click) -> None:
        """A click on a column's header sorts by it; a second click reverses."""
        if event.y != 0:
            return
        x = event.x + round(self.scroll_offset.x)
        for column, width in enumerate(self._widths):
            if x < width + 2:
                again = column == self.sort_column
                self.sort_by(column, not self.descending if again else False)
                return
            x -= width + 2

    def _row_of(self, rollout: RolloutFinished) -> int:
        if self.sort_column is None:
            return next(
                i for i in range(len(self.rollouts) - 1, -1, -1) if self.rollouts[i] is rollout
            )
        at = bisect.bisect_left(self._sort_keys, self._key(rollout))
        while self.rollouts[at] is not rollout:
            at += 1
        return at

    # -- pausing ------------------------------------------------------------------------

    def hold(self) -> None:
        """Stops showing new rows (they are kept); the marks of the last resume go."""
        if self.held is None:
            self.held = []
            self.fresh = set()
            self.refresh()

    def resume(self) -> int:
        """Shows the rows that came while paused, marked; returns how many."""
        held, self.held = self.held or [], None
        self.fresh = {id(r) for r in held}
        self.add_rollouts(held)
        self.refresh()
        return len(held)

    def set_filter(self, text: str) -> RolloutFilter:
        self.filter = RolloutFilter.parse(text)
        self._show_rows()
        self.cursor_row = 0
        self.scroll_to(y=0, animate=False)
        return self.filter

    def _show_rows(self) -> None:
        """The shown rows again from every row: filtered, then sorted (a stable sort: ties
        keep the order they came in)."""
        rows = [r for r in self.all if self.filter.matches(r)]
        if self.sort_column is None:
            self._sort_keys = []
        else:
            keyed = sorted(((self._key(r), n) for n, r in enumerate(rows)), key=lambda kn: kn[0])
            rows = [rows[n] for _, n in keyed]
            self._sort_keys = [key for key, _ in keyed]
        self.rollouts = rows
        self._widths = [len(c) for c in self._headers()]
        self._widen(self.rollouts)
        self._resize()
        self.refresh()

    def _headers(self) -> tuple[str, ...]:
        """The column names, the sorted one with its direction."""
        if self.sort_column is None:
            return COLUMNS
        mark = " ▼" if self.descending else " ▲"
        return tuple(c + mark if i == self.sort_column else c for i, c in enumerate(COLUMNS))

    def clear(self) -> None:
        self.all, self.rollouts, self.cursor_row, self._sort_keys = [], [], 0, []
        self._resize()
        self.refresh()

    def _widen(self, rows: list[RolloutFinished]) -> None:
        widths = self._widths
        for r in rows:
            for i, cell in enumerate(_cells(r)):
                if len(cell) > widths[i]:
                    widths[i] = len(cell)

    def _resize(self) -> None:
        width = sum(w + 2 for w in self._widths)
        self.virtual_size = Size(width, len(self.rollouts) + 1)  # + the header row

    # -- the cursor -----------------------------------------------------------------------

    def move_cursor(self, *, row: int, animate: bool = False) -> None:
        if not self.rollouts:
            return
        self.cursor_row = max(0, min(len(self.rollouts) - 1, row))
        rows_shown = max(1, self.scrollable_content_region.height - 1)
        top = round(self.scroll_offset.y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + rows_shown:
            self.scroll_to(y=self.cursor_row - rows_shown + 1, animate=False)
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(row=self.cursor_row + delta)

    def action_page(self, delta: int) -> None:
        rows_shown = max(1, self.scrollable_content_region.height - 1)
        self.move_cursor(row=self.cursor_row + delta * rows_shown)

    def action_edge(self, end: int) -> None:
        self.move_cursor(row=len(self.rollouts) - 1 if end else 0)

    def action_select(self) -> None:
        if self.rollouts:
            self.post_message(self.RowSelected(self, self.cursor_row))

    # -- drawing: only the rows on screen ---------------------------------------------------

    def _line(self, cells: tuple[str, ...], style: Style) -> Strip:
        text = "".join(f" {c:<{w}} " for c, w in zip(cells, self._widths, strict=True))
        return Strip([Segment(text, style)])

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if y == 0:
            strip = self._line(self._headers(), self.get_component_rich_style("rollouts--header"))
        else:
            row = round(scroll_y) + y - 1
            if row >= len(self.rollouts):
                return Strip.blank(width, self.rich_style)
            if row == self.cursor_row:
                style = self.get_component_rich_style("rollouts--cursor")
            elif self.fresh and id(self.rollouts[row]) in self.fresh:
                style = self.get_component_rich_style("rollouts--new")
            elif row % 2:
                style = self.get_component_rich_style("rollouts--odd")
            else:
                style = self.rich_style
            strip = self._line(_cells(self.rollouts[row]), style)
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)


class _Reversed:
    """A sort key in reverse order (bisect needs keys, not a reverse flag)."""

    __slots__ = ("key",)

    def __init__(self, key) -> None:
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and other.key == self.key
