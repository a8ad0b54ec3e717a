"""Each gate decision: step, verdict, val before → candidate, items up/down."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from core.events import GateDecided

BATCH = 40  # newest decisions added per update


class GateLog(DataTable):
    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="none", show_cursor=False, **kwargs)

    def on_mount(self) -> None:
        self.add_columns("step", "gate", "val", "±")

    def add_gates(self, gates: list[GateDecided]) -> None:
        for gate in gates[-BATCH:]:
            verdict = Text("kept", style="bold green") if gate.accepted else Text(
                "rej", style="red")
            after = "?" if gate.candidate_score is None else f"{gate.candidate_score:.2f}"
            self.add_row(str(gate.step), verdict, f"{gate.best_before:.2f}→{after}",
                         f"+{gate.items_improved}/-{gate.items_regressed}")
        if gates:
            self.scroll_end(animate=False)
