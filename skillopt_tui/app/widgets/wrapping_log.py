"""A RichLog whose lines wrap at the log's own width (`expand`/`shrink` on every write),
not at RichLog's default of 78 columns; `seen` counts the items already written.

A log on a hidden tab has no width (RichLog would wrap what arrives meanwhile at one
column, a character per line, and slowly: a live run's reflections while the Rollouts tab
is shown); it wraps at the width it had when last shown instead. Before it was ever shown
RichLog keeps every write to render at once when it is: a log with a `PENDING_LIMIT` keeps
only that many of the newest (at 10,000 events/s, minutes of reflections rendered in one
go froze the screen for most of a second on first showing the tab)."""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.events import Resize
from textual.widgets import RichLog


class WrappingLog(RichLog):
    PENDING_LIMIT: int | None = None  # writes kept before the log was first shown

    def __init__(self, **kwargs) -> None:
        super().__init__(
            wrap=True, markup=False, highlight=False, max_lines=5000, min_width=1, **kwargs
        )
        self.seen = 0
        self._shown_width = 0  # the content width when last shown
        self._pending: deque | None = None if self.PENDING_LIMIT is None else deque()
        self._dropped = 0

    def on_resize(self, event: Resize) -> None:  # RichLog's own handler runs after this
        if self.scrollable_content_region.width > 0:
            self._shown_width = self.scrollable_content_region.width
            pending, self._pending = self._pending, None
            if self._dropped:
                note = f"… {self._dropped} earlier entries not shown (the run directory has them)"
                self.write(Text(note, style="dim"))
            for content in pending or ():
                self.write(content)

    def write(  # type: ignore[override]
        self,
        content,
        width: int | None = None,
        expand: bool = True,
        shrink: bool = True,
        scroll_end: bool | None = None,
        animate: bool = False,
    ):
        if self._pending is not None and width is None:  # never shown yet: the newest only
            self._pending.append(content)
            if len(self._pending) > (self.PENDING_LIMIT or 0):
                self._pending.popleft()
                self._dropped += 1
            return self
        if width is None and self._size_known and self.scrollable_content_region.width < 1:
            width = self._shown_width or self.app.size.width  # hidden: its last width
        return super().write(content, width, expand, shrink, scroll_end, animate)

    def clear(self):  # type: ignore[override]
        if self._pending is not None:
            self._pending.clear()
            self._dropped = 0
        return super().clear()
