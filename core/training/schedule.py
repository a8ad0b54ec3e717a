"""The textual learning rate: how many edits a step may apply (DESIGN §4, step 4).

Like a learning-rate schedule, the budget starts generous and tightens, so early steps can
restructure a skill and later ones only polish it.
"""

from __future__ import annotations

import math

from core.config import ScheduleConfig


def edit_budget_for_step(schedule: ScheduleConfig, step: int, total_steps: int) -> int:
    """Edits allowed at `step` (0-based) of `total_steps`: `start` at the first step, `end`
    at the last, constant / linear / half-cosine in between, rounded half up, never negative.
    """
    start, end = schedule.start, schedule.end
    if schedule.kind == "constant" or total_steps <= 1:
        return max(0, start)
    progress = min(1.0, max(0.0, step / (total_steps - 1)))
    if schedule.kind == "linear":
        value = start + (end - start) * progress
    elif schedule.kind == "cosine":
        value = end + (start - end) * (1.0 + math.cos(math.pi * progress)) / 2.0
    else:  # config validation makes this unreachable; fail loudly if it is not
        raise ValueError(f"unknown schedule kind: {schedule.kind!r}")
    # Round half up (not banker's rounding) so the budget is monotonic and predictable.
    return max(0, math.floor(value + 0.5))
