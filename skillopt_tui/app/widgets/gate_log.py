"""Each gate decision: step, verdict, val before → candidate, items up/down."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from core.run.events import GateDecided

BATCH = 40  # newest decisions added per update


def gate_scores(gate: GateDecided) -> str:
    """Before → after; a candidate rejected early (before every val item was scored) has
    no score, only the bound it could not beat."""
    if gate.candidate_score is not None:
        return f"{gate.best_before:.2f}→{gate.candidate_score:.2f}"
    if gate.items_scored == 0:
        return f"{gate.best_before:.2f} (invalid)"
    return f"≤{gate.best_before:.2f} (early)"


class GateLog(DataTable):
    can_focus = False  # no cursor: focus here would swallow Enter/arrows meant for rollouts

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="none", show_cursor=False, **kwargs)

    def on_mount(self) -> None:
        self.add_columns("step", "gate", "val", "±")

    def add_gates(self, gates: list[GateDecided]) -> None:
        for gate in gates[-BATCH:]:
            verdict = (
                Text("kept", style="bold green") if gate.accepted else Text("rej", style="red")
            )
            self.add_row(
                str(gate.step),
                verdict,
                gate_scores(gate),
                f"+{gate.items_improved}/-{gate.items_regressed}",
            )
        if gates:
            self.scroll_end(animate=False)
