"""Which train items a step sees: the textual analogue of a data loader's minibatches.

An epoch is one pass over the train split in an order shuffled with (run seed, epoch):
step k of the pass takes the k-th slice of `batch_size` items, and the last slice may be
partial, as in the published method (a batch never wraps around to items the same pass
already showed). When `steps_per_epoch` asks for more steps than one pass has, the next
step starts a fresh pass in a new seeded order. Deterministic, so a resumed run sees
exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

import math
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
    """Step k of an epoch: the k-th slice of the epoch's order (seeded by run seed +
    epoch); the pass's last slice holds what is left."""
    if not items:
        return []
    epoch, k = divmod(step, steps_per_epoch)
    steps_per_pass = math.ceil(len(items) / batch_size)
    extra_pass, k = divmod(k, steps_per_pass)
    order = list(items)
    if shuffle:
        # The first pass keeps the seed it always had, so runs already on disk resume
        # with the batches they started with.
        tag = f"batch:{seed}:{epoch}" + (f":{extra_pass}" if extra_pass else "")
        random.Random(tag).shuffle(order)
    return order[k * batch_size : (k + 1) * batch_size]
