"""What the model is shown of a workbook: its sheets and their top-left cells. Both targets
(program and agent) put it in their prompt."""

from __future__ import annotations

from pathlib import Path

PREVIEW_ROWS, PREVIEW_COLS = 8, 8


def preview(workbook: Path) -> str:
    """Sheet names and the top-left cells of each sheet, for the prompt."""
    import openpyxl

    wb = openpyxl.load_workbook(workbook, data_only=True, read_only=True)
    lines = []
    for ws in wb.worksheets:
        lines.append(f"Sheet {ws.title!r} ({ws.max_row} rows x {ws.max_column} columns):")
        for row in ws.iter_rows(max_row=PREVIEW_ROWS, max_col=PREVIEW_COLS):
            cells = [
                f"{c.coordinate}={c.value!r}" for c in row if getattr(c, "value", None) is not None
            ]
            if cells:
                lines.append("  " + ", ".join(cells))
    wb.close()
    return "\n".join(lines)


PUBLISHED_ROWS, PUBLISHED_COLS, PUBLISHED_CELL_CHARS = 5, 20, 40


def published_preview(workbook: Path) -> str:
    """The published harness's preview: per sheet a `## Sheet:` line with its dimensions,
    then the first five rows of up to twenty columns as `A1=value | B1=` (formulas shown as
    written, empty cells left empty, values over forty characters cut with "..."), and how
    many rows follow."""
    import openpyxl

    wb = openpyxl.load_workbook(workbook)
    lines = []
    for ws in wb.worksheets:
        lines.append(
            f"## Sheet: {ws.title}  "
            f"(dim={ws.dimensions}, max_row={ws.max_row}, max_col={ws.max_column})"
        )
        rows = ws.iter_rows(
            max_row=min(ws.max_row, PUBLISHED_ROWS), max_col=min(ws.max_column, PUBLISHED_COLS)
        )
        for row in rows:
            lines.append(" | ".join(f"{c.coordinate}={_clipped(c.value)}" for c in row))
        if ws.max_row > PUBLISHED_ROWS:
            lines.append(f"... ({ws.max_row - PUBLISHED_ROWS} more rows)")
        lines.append("")
    wb.close()
    return "\n".join(lines)


def _clipped(value: object) -> str:
    if value is None:
        return ""
    text = str(value)
    if len(text) > PUBLISHED_CELL_CHARS:
        return text[: PUBLISHED_CELL_CHARS - 3] + "..."
    return text
