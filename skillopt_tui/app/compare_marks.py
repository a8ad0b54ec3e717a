"""Marking runs to compare, for the screens that list runs: space marks (or unmarks) the
run under the cursor, c opens Compare on the marked ones, the first marked being the
baseline the others are compared against. Home marks training runs; Sleep marks a night's
skill folders (one skill across nights)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.binding import Binding

MARK = "● "
MARK_KEYS = [
    Binding("space", "mark", "Mark", show=False, tooltip="Mark or unmark this run to compare"),
    Binding("c", "compare", "Compare", show=False, tooltip="Compare the marked runs item by item"),
]


def marked_cell(cell: str, marked: bool) -> str | Text:
    """The run's name with a dot before it while it is marked (unmarked: as it was)."""
    return Text.assemble((MARK, "bold magenta"), cell) if marked else cell


def marks_hint(marked: list[Path]) -> str:
    if not marked:
        return ""
    more = "c compares them" if len(marked) > 1 else "mark one more to compare"
    return f"{len(marked)} marked (baseline {marked[0].name}): {more}; space unmarks"


class CompareMarks:
    """Mixed into a screen (before AppScreen) that lists runs. The screen says which run
    folder is under the cursor and redraws its list when the marks change."""

    marked: list[Path]

    def run_under_cursor(self) -> Path | None:
        raise NotImplementedError

    def marks_changed(self) -> None:
        raise NotImplementedError

    def action_mark(self) -> None:
        path = self.run_under_cursor()
        if path is None:
            return
        if path in self.marked:
            self.marked.remove(path)
        else:
            self.marked.append(path)
        self.marks_changed()

    def action_compare(self) -> None:
        if len(self.marked) < 2:
            self.notify(  # type: ignore[attr-defined]
                "Mark at least two runs with space, then press c to compare them.",
                title="Nothing to compare",
                severity="warning",
            )
            return
        self.app.open_compare(list(self.marked))  # type: ignore[attr-defined]
