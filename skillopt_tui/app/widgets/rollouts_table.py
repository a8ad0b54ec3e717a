"""Every rollout of the run, live or replayed; Enter on a row asks for its trajectory.

Nothing is dropped: DataTable draws only the rows on screen, so a run of thousands of
rollouts scrolls as cheaply as one of ten. A filter (`f`: phase names and step numbers,
e.g. "gate 3" or "baseline") narrows the rows without losing the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.widgets import DataTable

from core.run.events import RolloutFinished
from skillopt_tui.run_words import rollout_phase, rollout_step, step_cell


def _cells(r: RolloutFinished) -> tuple[str, ...]:
    return (
        step_cell(r),
        rollout_phase(r),
        r.item_id,
        f"{r.hard:.2f}",
        f"{r.latency_s:.1f}s",
        f"{r.input_tokens}+{r.output_tokens}" + (" cut" if r.truncated else ""),
    )


@dataclass(frozen=True)
class RolloutFilter:
    """Words are phases (any of them matches), numbers are steps (any of them matches)."""

    phases: frozenset[str] = frozenset()
    steps: frozenset[int] = frozenset()

    @classmethod
    def parse(cls, text: str) -> RolloutFilter:
        words = text.lower().replace(",", " ").split()
        steps = frozenset(int(w) for w in words if w.isdigit())
        phases = frozenset(w for w in words if not w.isdigit() and w != "step")
        return cls(phases, steps)

    def matches(self, r: RolloutFinished) -> bool:
        name = rollout_phase(r)
        if self.phases and not any(p in r.phase.lower() or p in name for p in self.phases):
            return False
        return not self.steps or rollout_step(r) in self.steps

    def __str__(self) -> str:
        return " ".join([*sorted(self.phases), *map(str, sorted(self.steps))])


class RolloutsTable(DataTable):
    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.all: list[RolloutFinished] = []  # every rollout seen
        self.rollouts: list[RolloutFinished] = []  # the rows shown (filtered)
        self.filter = RolloutFilter()

    @property
    def total(self) -> int:
        return len(self.all)

    def on_mount(self) -> None:
        self.add_columns("step", "phase", "item", "score", "latency", "tokens")

    def add_rollouts(self, rollouts: list[RolloutFinished]) -> None:
        """Appends a batch; follows the tail unless the user moved the cursor up."""
        if not rollouts:
            return
        self.all.extend(rollouts)
        shown = [r for r in rollouts if self.filter.matches(r)]
        if not shown:
            return
        following = self.row_count == 0 or self.cursor_row >= self.row_count - 1
        self.add_rows(_cells(r) for r in shown)
        self.rollouts.extend(shown)
        if following:
            self.move_cursor(row=self.row_count - 1, animate=False)

    def set_filter(self, text: str) -> RolloutFilter:
        self.filter = RolloutFilter.parse(text)
        self.clear()
        self.rollouts = [r for r in self.all if self.filter.matches(r)]
        self.add_rows(_cells(r) for r in self.rollouts)
        return self.filter

    def rollout_at(self, row: int) -> RolloutFinished | None:
        return self.rollouts[row] if 0 <= row < len(self.rollouts) else None
