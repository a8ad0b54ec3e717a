"""The optimizer's reflection text, appended as it arrives."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import RichLog

from core.run.events import ReflectionText

BATCH = 40  # newest reflections written per update; the run directory keeps them all


class ReflectionLog(RichLog):
    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, max_lines=5000, **kwargs)

    def add_reflections(self, items: list[ReflectionText]) -> None:
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
