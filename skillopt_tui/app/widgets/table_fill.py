"""Refills a DataTable with columns sized to their content.

The widths are measured here rather than left to DataTable's auto width, which measures
on idle and can paint a first frame (and keep it) with header-wide columns."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text
from textual.widgets import DataTable


def _width(cell: RenderableType) -> int:
    text = cell if isinstance(cell, Text) else Text(str(cell))
    return max((len(line) for line in text.plain.splitlines()), default=0)


def fill_table(
    table: DataTable,
    columns: Sequence[str],
    rows: Sequence[Sequence[RenderableType]],
    keys: Sequence[str] | None = None,
) -> None:
    table.clear(columns=True)
    for i, label in enumerate(columns):
        width = max([len(label), *(_width(row[i]) for row in rows)])
        table.add_column(label, width=width)
    for n, row in enumerate(rows):
        table.add_row(*row, key=keys[n] if keys else None)
