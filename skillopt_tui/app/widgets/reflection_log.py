"""The optimizer's reflection text, appended as it arrives."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import RichLog

from core.run.events import ReflectionText

BATCH = 40  # newest reflections written per update; the run directory keeps them all


PLACEHOLDER = (
    "No reflection yet: the optimizer writes one after each step's train rollouts "
    "(the baseline comes first)."
)


class ReflectionLog(RichLog):
    """Lines wrap at the log's own width (`expand`/`shrink` on every write), not at
    RichLog's default of 78 columns."""

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

    def on_mount(self) -> None:
        self.write(Text(PLACEHOLDER, style="dim"))

    def add_reflections(self, items: list[ReflectionText]) -> None:
        if not items:
            return
        if not self.seen:
            self.clear()  # the placeholder
        self.seen += len(items)
        if len(items) > BATCH:
            self.write(
                Text(
                    f"… {len(items) - BATCH} reflections skipped (in the run directory)",
                    style="dim",
                )
            )
            items = items[-BATCH:]
        for item in items:
            self.write(
                Text.assemble(
                    (f"step {item.step} · {item.kind}", "bold magenta"),
                    (f" (group {item.group})", "dim"),
                )
            )
            self.write(Text(item.text))
