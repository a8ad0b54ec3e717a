"""Refills a DataTable with columns sized to their content.

The widths are measured here rather than left to DataTable's auto width, which measures
on idle and can paint a first frame (and keep it) with header-wide columns. Given `fit`
(the cells the table has), one `flexible` column gives up what the others need and its
long cells are cut in the middle with … (the screen shows them whole elsewhere), so no
column is pushed past the edge. The tail is what stays: names that share a start
(`staged/sleep-2026-11-30-notes-app`, `…-api`) differ at their end."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text
from textual.widgets import DataTable


def _width(cell: RenderableType) -> int:
    text = cell if isinstance(cell, Text) else Text(str(cell))
    return max((len(line) for line in text.plain.splitlines()), default=0)


CELL_PADDING = 2  # DataTable's one cell either side of each column


def fill_table(
    table: DataTable,
    columns: Sequence[str],
    rows: Sequence[Sequence[RenderableType]],
    keys: Sequence[str] | None = None,
    *,
    fit: int | None = None,
    flexible: int = 0,
) -> None:
    table.clear(columns=True)
    widths = [
        max([len(label), *(_width(row[i]) for row in rows)]) for i, label in enumerate(columns)
    ]
    over = sum(widths) + CELL_PADDING * len(widths) - (fit or 0)
    if fit and over > 0:
        widths[flexible] = max(len(columns[flexible]), widths[flexible] - over)
        rows = [_cut_column(row, flexible, widths[flexible]) for row in rows]
    for label, width in zip(columns, widths, strict=True):
        table.add_column(label, width=width)
    for n, row in enumerate(rows):
        table.add_row(*row, key=keys[n] if keys else None)


LEAD = re.compile(r"^\s*(?:↳\s+)?")  # indentation and a row marker stay before the …


def keep_tail(text: Text, width: int) -> Text:
    """`text` in `width` cells: its lead (indentation, ↳), …, then as much of its end as
    fits. A width too small for that keeps the end alone."""
    if len(text.plain) <= width:
        return text
    lead = LEAD.match(text.plain).end()  # type: ignore[union-attr]
    if width - lead < 4:
        lead = 0
    tail = width - lead - 1
    if tail <= 0:
        return text[len(text.plain) - width :]
    return Text.assemble(text[:lead], ("…", "dim"), text[len(text.plain) - tail :])


def _cut_column(row: Sequence[RenderableType], i: int, width: int) -> list[RenderableType]:
    cell = row[i]
    if _width(cell) <= width:
        return list(row)
    text = cell if isinstance(cell, Text) else Text(str(cell))
    return [*row[:i], keep_tail(text, width), *row[i + 1 :]]
