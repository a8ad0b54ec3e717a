"""Train / val / test by a stable hash of the task id.

A task never moves between splits from one night to the next (the hash depends only on
its id), so a task the optimizer learned from can never later count as validation. A
train-only task (mined with no rubric, reference or check: nothing to judge it by) is
always train; its flag is sticky in the archive, so it never moves either.
"""

from __future__ import annotations

import hashlib

from sleep.mine.tasks import MinedTask


def split_of(task_id: str, *, val_fraction: float, test_fraction: float) -> str:
    bucket = int(hashlib.sha256(f"split:{task_id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if bucket < test_fraction:
        return "test"
    if bucket < test_fraction + val_fraction:
        return "val"
    return "train"


def task_split(task: MinedTask, *, val_fraction: float, test_fraction: float) -> str:
    """A task's split: by its id's hash, except a task with nothing to judge it by, which
    only ever trains (it must never gate)."""
    if task.train_only:
        return "train"
    return split_of(task.id, val_fraction=val_fraction, test_fraction=test_fraction)
