"""A RichLog whose lines wrap at the log's own width (`expand`/`shrink` on every write),
not at RichLog's default of 78 columns; `seen` counts the items already written."""

from __future__ import annotations

from textual.widgets import RichLog


class WrappingLog(RichLog):
    def __init__(self, **kwargs) -> None:
        super().__init__(
            wrap=True, markup=False, highlight=False, max_lines=5000, min_width=1, **kwargs
        )
        self.seen = 0

    def write(  # type: ignore[override]
        self,
        content,
        width: int | None = None,
        expand: bool = True,
        shrink: bool = True,
        scroll_end: bool | None = None,
        animate: bool = False,
    ):
        return super().write(content, width, expand, shrink, scroll_end, animate)
