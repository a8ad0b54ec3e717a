"""The held-out tasks a night gates on: gathered across nights, and enough of them.

A skill's gate decided on 2 held-out tasks, by one item: that is no evidence. So a night
gates only on at least `min_val_tasks` held-out (val) tasks of the skill, and says how
many it is waiting for until then, staging nothing.

The held-out tasks accumulate: the split is stable by task id (sleep/mine/split.py), and the
mined-task archive (`<state>/tasks.json`, redacted as mined) keeps every night's tasks,
so a night takes its val tasks from every earlier night of the project and skill too —
the most recent `max_val_tasks` of them (a cap on the gate's cost, kept apart from
`max_tasks`, so that tonight's many train tasks never crowd out the held-out ones).
Train-only tasks (nothing to judge them by) are train by their split: they never count.
"""

from __future__ import annotations

from collections.abc import Iterable

from sleep.mine.heuristic import priority
from sleep.mine.split import split_tasks, task_split
from sleep.mine.tasks import MinedTask
from sleep.night.replay_modes import SKIP_REASONS
from sleep.state.settings import DEFAULT_MAX_VAL_TASKS


def _recent_first(task: MinedTask) -> tuple:
    """Replayable kinds first (an external or redacted task never replays, so it must not
    take a held-out place), then the most recently seen; the id breaks ties."""
    stamp = task.last_seen or ""
    return (task.kind in SKIP_REASONS, tuple(-ord(c) for c in stamp), task.id)


def night_splits(
    tasks: Iterable[MinedTask],
    *,
    max_tasks: int,
    max_val_tasks: int = DEFAULT_MAX_VAL_TASKS,
    val_fraction: float,
    test_fraction: float,
) -> dict[str, list[MinedTask]]:
    """The splits a night replays from `tasks` (the archive's tasks of one project and
    skill, every night's): every val task up to the most recent `max_val_tasks`, and the
    train and test tasks by priority (sleep/mine.priority) up to `max_tasks`."""
    held, rest = [], []
    for task in tasks:
        split = task_split(task, val_fraction=val_fraction, test_fraction=test_fraction)
        (held if split == "val" else rest).append(task)
    kept = sorted(held, key=_recent_first)[:max_val_tasks]
    learn = sorted(rest, key=priority)[:max_tasks]
    return split_tasks(learn + kept, val_fraction=val_fraction, test_fraction=test_fraction)


def waiting_for_val(val_tasks: int, min_val_tasks: int) -> str | None:
    """Why the night gates nothing for a skill with `val_tasks` replayable held-out
    tasks, or None when that is enough."""
    if val_tasks >= min_val_tasks:
        return None
    return (
        f"waiting for more held-out tasks ({val_tasks} of {min_val_tasks}): the gate "
        "decides on at least that many; later nights' sessions add to them"
    )
