"""The optimizer's reflection text, appended as it arrives."""

from __future__ import annotations

from rich.text import Text

from core.run.events import ReflectionText
from skillopt_tui.app.widgets.wrapping_log import WrappingLog

BATCH = 40  # newest reflections written per update; the run directory keeps them all


PLACEHOLDER = (
    "No reflection yet: the optimizer writes one after each step's train rollouts "
    "(the baseline comes first)."
)


class ReflectionLog(WrappingLog):
    PENDING_LIMIT = 10  # batches kept until the tab is first shown (~400 reflections)

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
        # one write for the batch: RichLog renders (and scrolls) once per write
        self.write(
            Text("\n").join(
                Text.assemble(
                    (f"step {item.step} · {item.kind}", "bold magenta"),
                    (f" (group {item.group})", "dim"),
                    "\n",
                    item.text,
                )
                for item in items
            )
        )
