"""Streaming table of rollouts; Enter on a row asks the screen to show its trajectory.

It is a live view, not the record (the run directory has every rollout): each update adds
at most BATCH rows, the newest, and the table keeps at most MAX_ROWS, so the cost per
update is bounded however fast a run writes."""

from __future__ import annotations

from textual.widgets import DataTable

from core.run.events import RolloutFinished

BATCH = 60
MAX_ROWS = 400
KEEP_ON_TRIM = 200


def _cells(r: RolloutFinished) -> tuple[str, ...]:
    step = "base" if r.phase == "baseline" else str(r.step)  # baseline runs before step 1
    return (
        step,
        r.phase,
        r.item_id,
        f"{r.hard:.2f}",
        f"{r.latency_s:.1f}s",
        f"{r.input_tokens}+{r.output_tokens}",
    )


class RolloutsTable(DataTable):
    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.rollouts: list[RolloutFinished] = []
        self.total = 0  # rollouts seen, shown or not

    def on_mount(self) -> None:
        self.add_columns("step", "phase", "item", "score", "latency", "tokens")

    def add_rollouts(self, rollouts: list[RolloutFinished]) -> None:
        """Appends a batch; follows the tail unless the user moved the cursor up."""
        if not rollouts:
            return
        self.total += len(rollouts)
        rollouts = rollouts[-BATCH:]
        following = self.row_count == 0 or self.cursor_row >= self.row_count - 1
        if len(self.rollouts) + len(rollouts) > MAX_ROWS:
            kept = self.rollouts[-KEEP_ON_TRIM:]
            self.clear()
            self.rollouts = []
            rollouts = kept + rollouts
            following = True
        self.add_rows(_cells(r) for r in rollouts)
        self.rollouts.extend(rollouts)
        if following:
            self.move_cursor(row=self.row_count - 1, animate=False)

    def rollout_at(self, row: int) -> RolloutFinished | None:
        return self.rollouts[row] if 0 <= row < len(self.rollouts) else None
