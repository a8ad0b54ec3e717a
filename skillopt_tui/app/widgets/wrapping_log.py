"""A RichLog whose lines wrap at the log's own width (`expand`/`shrink` on every write),
not at RichLog's default of 78 columns; `seen` counts the items already written.

A log on a hidden tab has no width (RichLog would wrap what arrives meanwhile at one
column, a character per line, and slowly: a live run's reflections while the Rollouts tab
is shown); it wraps at the width it had when last shown instead."""

from __future__ import annotations

from textual.events import Resize
from textual.widgets import RichLog


class WrappingLog(RichLog):
    def __init__(self, **kwargs) -> None:
        super().__init__(
            wrap=True, markup=False, highlight=False, max_lines=5000, min_width=1, **kwargs
        )
        self.seen = 0
        self._shown_width = 0  # the content width when last shown

    def on_resize(self, event: Resize) -> None:  # RichLog's own handler runs too
        if self.scrollable_content_region.width > 0:
            self._shown_width = self.scrollable_content_region.width

    def write(  # type: ignore[override]
        self,
        content,
        width: int | None = None,
        expand: bool = True,
        shrink: bool = True,
        scroll_end: bool | None = None,
        animate: bool = False,
    ):
        if width is None and self._size_known and self.scrollable_content_region.width < 1:
            width = self._shown_width or self.app.size.width  # hidden: its last width
        return super().write(content, width, expand, shrink, scroll_end, animate)
