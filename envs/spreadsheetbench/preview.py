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
