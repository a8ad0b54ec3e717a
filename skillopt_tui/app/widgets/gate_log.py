"""Each gate decision: step, verdict, val before → candidate, items up/down; and the
finish's check of the final skill against the best, which decides what the run yields."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from core.run.events import FinalSkillChecked, GateDecided

BATCH = 40  # newest decisions added per update


def gate_scores(gate: GateDecided) -> str:
    """Before → after; a candidate rejected early (before every val item was scored) has
    no score, only the bound it could not beat."""
    if gate.candidate_score is not None:
        return f"{gate.best_before:.2f}→{gate.candidate_score:.2f}"
    if gate.items_scored == 0:
        return f"{gate.best_before:.2f} (invalid)"
    return f"≤{_bound(gate):.2f} (early)"


def _bound(gate: GateDecided) -> float:
    """The most an early-rejected candidate could have scored (older runs' events have
    no bound: the best it could not beat stands in)."""
    return gate.at_most if gate.at_most is not None else gate.best_before


class GateLog(DataTable):
    can_focus = False  # no cursor: focus here would swallow Enter/arrows meant for rollouts

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="none", show_cursor=False, **kwargs)

    def on_mount(self) -> None:
        self.add_columns("step", "gate", "val", "±")

    def add_gates(self, gates: list[GateDecided]) -> None:
        self._add([gate_cells(gate) for gate in gates[-BATCH:]])

    def add_final_checks(self, checks: list[FinalSkillChecked]) -> None:
        self._add([final_check_cells(check) for check in checks])

    def _add(self, rows: list[tuple]) -> None:
        for row in rows:
            self.add_row(*row)
        if rows:
            self.scroll_end(animate=False)


def gate_cells(gate: GateDecided) -> tuple[str, Text, str, str]:
    """step, verdict, val, items ±: narrow enough that ± stays in view at 60 columns (how
    a rejection was decided goes in the verdict, not after the score)."""
    if gate.accepted:
        verdict, val = Text("kept", style="bold green"), gate_scores(gate)
    elif gate.candidate_score is not None:
        verdict, val = Text("rej", style="red"), gate_scores(gate)
    elif gate.items_scored == 0:
        verdict, val = Text("invalid", style="red"), f"{gate.best_before:.2f}"
    else:
        verdict, val = Text("early", style="red"), f"≤{_bound(gate):.2f}"
    # An epoch end's slow update (and a Pareto merge) has the number of a step whose own
    # decision is the row above it: "su" ("m") tells them apart.
    suffix = {"slow_update": "su", "merge": "m"}.get(gate.source, "")
    if not gate.accepted and gate.p_value is not None:
        # A higher mean the significance gate found no evidence for: "ns" (its p is in
        # gate.json and the reason; a p column would push ± out of view at 60 columns).
        verdict = Text("ns", style="red")
    return f"{gate.step}{suffix}", verdict, val, f"+{gate.items_improved}/-{gate.items_regressed}"


def final_check_cells(check: FinalSkillChecked) -> tuple[str, Text, str, str]:
    """The finish's row: best → final, and "rej" when the final skill lost to the best
    (its ungated slow updates stayed in the running skill only, as the console line says).
    The check compares scores, not items, so ± is empty."""
    if check.outcome == "kept":
        verdict = Text("kept", style="bold green")
    else:
        verdict = Text("rej" if check.outcome == "rejected" else "invalid", style="red")
    if check.final_val is None:
        val = f"{check.best_val:.2f} (invalid)"
    else:
        val = f"{check.best_val:.2f}→{check.final_val:.2f}"
    return "final", verdict, val, ""
