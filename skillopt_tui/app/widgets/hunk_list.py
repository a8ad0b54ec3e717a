"""The staged diff as review items (whole hunks, or blocks of a split hunk), each marked
pending / approved / rejected / partly chosen / on main, the current one highlighted.

Lines are drawn in a grid: a choice column, the `+`/`-` gutter, then the text, so a long
line wraps inside its column and never loses its gutter. A very long line is cut with a
marker saying how much is hidden (`w` shows it whole). Decisions live in the screen's
ReviewState; this only draws them.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.skills_repo.line_select import part_header, part_rows
from skillopt_tui.app.widgets.word_diff import styled_lines

MARKS = {
    "pending": ("[ ]", "dim"),
    "approved": ("[y]", "bold green"),
    "rejected": ("[n]", "bold red"),
    "partial": ("[~]", "bold yellow"),
    "adopted": ("[=]", "cyan"),  # already on main (an earlier adopt)
}
LONG_LINE = 240  # characters shown of a longer line unless the item is shown whole


def head_text(item: Any, show_file: bool = False) -> Text:
    """One line: mark, item label, file, header, counts; cut with … rather than wrapped,
    so no part of it can pass for a diff line. A part carries its own `@@` header."""
    hunk = item.hunk
    mark, style = MARKS[item.decision]
    rows = part_rows(hunk, item.lines)
    added = sum(1 for _, kind in rows if kind == "+")
    removed = sum(1 for _, kind in rows if kind == "-")
    part = f" part {item.part}/{item.parts}" if item.part else ""
    header = part_header(hunk, item.lines) if item.part else hunk.header
    text = Text.assemble(
        (mark, style),
        " ",
        (item.label, "bold"),
        " ",
        (f"+{added} -{removed}", "dim"),
        (part, "yellow"),
        ("  conflicts with main" if item.conflicts else "", "bold red"),
        ("  on main" if item.decision == "adopted" else "", "cyan"),
        " ",
        (f"{hunk.file} " if show_file else "", "bold"),
        (header, "cyan"),
        no_wrap=True,
        overflow="ellipsis",
    )
    return text


def _cut(text: Text, whole: bool) -> Text:
    if whole or len(text.plain) <= LONG_LINE:
        return text
    hidden = len(text.plain) - LONG_LINE
    return Text.assemble(text[:LONG_LINE], (f" … +{hidden} chars (w: show all)", "bold magenta"))


def _choice(n: int, chosen: set[int], line_cursor: int | None, span: set[int]) -> Text:
    """The choice column of changed line n: while choosing, the cursor and x / ·; after
    choosing in part, ✓ for a chosen line and its number dimmed for one left out."""
    if line_cursor is not None:
        cursor = ">" if n == line_cursor else ("|" if n in span else " ")
        tick = "x" if n in chosen else "·"
        return Text.assemble(
            (cursor, "bold reverse" if n == line_cursor else "yellow"),
            (tick, "bold green" if n in chosen else "dim"),
            (f"{n:>2}"[-2:], "dim"),
            " ",
        )
    if chosen:
        return Text.assemble(
            ("✓" if n in chosen else " ", "bold green"),
            (f"{n:>3} ", "bold" if n in chosen else "dim"),
        )
    return Text(f"{n:>4} ", style="dim")


def item_body(
    item: Any,
    *,
    line_cursor: int | None = None,
    anchor: int | None = None,
    whole: bool = False,
) -> Table:
    """The item's rows in a grid (choice, gutter, text). While choosing lines, the line
    cursor is `>` and each changed line shows whether it is chosen (x) or not (·); once
    chosen in part, lines left out are dimmed and struck through, so the two never look
    alike."""
    grid = Table.grid(padding=(0, 0), expand=True)
    grid.add_column(width=5, no_wrap=True)
    grid.add_column(width=2, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    styled = styled_lines(list(item.hunk.lines))
    partial = item.decision == "partial"
    chosen = item.chosen_lines() if (partial or line_cursor is not None) else set()
    span = set()
    if anchor is not None and line_cursor is not None:
        lo, hi = sorted((anchor, line_cursor))
        span = set(range(lo, hi + 1))
    numbers, number = [], 0
    for line in item.hunk.lines:
        number += line[:1] in ("+", "-")
        numbers.append(number if line[:1] in ("+", "-") else None)
    for i, kind in part_rows(item.hunk, item.lines):
        text, n = styled[i], numbers[i]
        if kind == " " and n is not None:  # a `-` line this part leaves in place
            text = Text(" " + item.hunk.lines[i][1:])
            n = None
        body = _cut(text[1:], whole)
        if partial and line_cursor is None and n is not None and n not in chosen:
            body.stylize("dim strike")
        choice = Text("") if n is None else _choice(n, chosen, line_cursor, span)
        sign = kind if kind in "+-\\" else " "
        grid.add_row(choice, Text(sign + " ", style=text.style), body)
    return grid


class HunkView(Static):
    def __init__(self, item: Any, show_file: bool) -> None:
        super().__init__(classes="hunk")
        self.item = item
        self.show_file = show_file
        self.whole = False
        self.draw()

    def draw(self, line_cursor: int | None = None, anchor: int | None = None) -> None:
        item = self.item
        self.update(
            Group(
                head_text(item, self.show_file),
                item_body(item, line_cursor=line_cursor, anchor=anchor, whole=self.whole),
            )
        )
        for decision in ("approved", "rejected", "adopted", "partial"):
            self.set_class(item.decision == decision, f"-{decision}")
        self.set_class(item.conflicts, "-conflicts")


class HunkList(VerticalScroll):
    can_focus = True
    # ↑/↓ move between hunks (the screen's move), not scroll a line
    BINDINGS = [
        Binding("down", "screen.move(1)", show=False),
        Binding("up", "screen.move(-1)", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.views: list[HunkView] = []

    async def set_items(self, items: list[Any], empty_text: str = "No hunks.") -> None:
        await self.remove_children()
        several_files = len({i.hunk.file for i in items}) > 1
        self.views = [HunkView(i, several_files) for i in items]
        if self.views:
            await self.mount_all(self.views)
        else:
            await self.mount(Static(Text(empty_text, style="dim"), classes="hunk-empty"))
        self.scroll_home(animate=False)

    def redraw(self, position: int, line_cursor: int | None = None, anchor=None) -> None:
        if 0 <= position < len(self.views):
            self.views[position].draw(line_cursor, anchor)

    def set_current(self, position: int) -> None:
        for i, view in enumerate(self.views):
            view.set_class(i == position, "-current")
        if 0 <= position < len(self.views):
            self.scroll_to_widget(self.views[position], animate=False, top=True)
