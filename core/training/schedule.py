"""The textual learning rate: how many edits a step may apply (DESIGN §4, step 4).

Like a learning-rate schedule, the budget starts generous and tightens, so early steps can
restructure a skill and later ones only polish it. Stateless: the budget of a step is a
function of (schedule, step, total steps) only, so a resumed run gets the same budgets.
"""

from __future__ import annotations

import math

from core.config import ScheduleConfig


def schedule_progress(step: int, total_steps: int) -> float:
    """How far training is once `step` (0-based) is done: (step + 1) / total, in (0, 1].

    This is the published progress: the schedule is evaluated after the step, so the last
    step sits at the end value and the first one already one step down the curve (with
    4 → 2 over 4 steps: 4, 3, 2, 2; over 8: 4, 4, 3, 3, 3, 2, 2, 2).
    """
    return min(1.0, max(0.0, (step + 1) / total_steps))


def edit_budget_for_step(schedule: ScheduleConfig, step: int, total_steps: int) -> int:
    """Edits allowed at `step` (0-based) of `total_steps`: constant / linear / half-cosine
    from `start` to `end` over `schedule_progress`, rounded to the nearest integer with
    Python's `round` (ties to even, as published), never negative. A run of one step
    gets `start`, as published (there is no curve to walk down)."""
    start, end = schedule.start, schedule.end
    if schedule.kind == "constant" or total_steps <= 1:
        return max(0, start)
    progress = schedule_progress(step, total_steps)
    if schedule.kind == "linear":
        value = start + (end - start) * progress
    elif schedule.kind == "cosine":
        value = end + (start - end) * (1.0 + math.cos(math.pi * progress)) / 2.0
    else:  # config validation makes this unreachable; fail loudly if it is not
        raise ValueError(f"unknown schedule kind: {schedule.kind!r}")
    return max(0, round(value))
