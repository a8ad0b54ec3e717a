"""Train / val / test by a stable hash of what the person asked.

A task never moves between splits from one night to the next, so a task the optimizer
learned from can never later count as validation. The hash is of the request's shape
(sleep/mine/heuristic.shape_of of the task's first wording, which the archive keeps), not
of the task id: the id also holds the project's path, and a split that depends on where
the project lives moves when the same sessions are read from another checkout (a corpus
copied into a temporary folder held out 1 of 5 occurrences in one run, 5 of 5 in the
next). Within a project the shape is what tells tasks apart anyway. A train-only task
(mined with no rubric, reference or check: nothing to judge it by) is always train; its
flag is sticky in the archive, so it never moves either.
"""

from __future__ import annotations

import hashlib

from sleep.mine.heuristic import shape_of
from sleep.mine.tasks import MinedTask


def split_of(key: str, *, val_fraction: float, test_fraction: float) -> str:
    bucket = int(hashlib.sha256(f"split:{key}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if bucket < test_fraction:
        return "test"
    if bucket < test_fraction + val_fraction:
        return "val"
    return "train"


def split_key(request: str) -> str:
    """What a task's split is hashed from: the shape of the request as first worded."""
    return shape_of(request)


def task_split(task: MinedTask, *, val_fraction: float, test_fraction: float) -> str:
    """A task's split: by its request's hash, except a task with nothing to judge it by,
    which only ever trains (it must never gate)."""
    if task.train_only:
        return "train"
    return split_of(split_key(task.intent), val_fraction=val_fraction, test_fraction=test_fraction)
