"""Which train items a step sees: the textual analogue of a data loader's minibatches.

Each epoch walks the train split in an order shuffled with (run seed, epoch), step k of the
epoch taking the k-th slice; an epoch that asks for more items than the split holds wraps
around. Deterministic, so a resumed run sees exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

import random

from core.environment.contract import TaskItem


def batch_for_step(
    items: list[TaskItem],
    step: int,
    steps_per_epoch: int,
    batch_size: int,
    seed: int,
    shuffle: bool,
) -> list[TaskItem]:
    """Step k of an epoch takes the k-th slice of the epoch's order (seeded by run seed +
    epoch), wrapping around when the epoch asks for more items than the split has."""
    if not items:
        return []
    epoch, k = divmod(step, steps_per_epoch)
    order = list(items)
    if shuffle:
        random.Random(f"batch:{seed}:{epoch}").shuffle(order)
    n = len(order)
    size = min(batch_size, n)
    start = (k * batch_size) % n
    return [order[(start + i) % n] for i in range(size)]
