"""Which val/test items a `train.val_limit` / `train.test_limit` keeps: a seeded sample.

A limit keeps a split small enough for a slow model, but the items it keeps must still
stand for the split. The first N of a manifest do so only when the manifest is already in
random order; ours are not all so (capitals lists its items grouped by country, so its
first 30 val items were all states from A to I). So an item is kept when its key
sha256("<run seed>:<split>:<item id>") is among the N smallest of the split's keys, and
the kept items stay in manifest order. Same seed and same manifest → same items, on
every run, resume and `skillopt eval`; the choice does not depend on the manifest's order,
and adding one item to a manifest changes at most one kept item.
"""

from __future__ import annotations

import hashlib

from core.environment.contract import TaskItem


def limited_split(
    items: list[TaskItem], limit: int | None, *, seed: int, split: str
) -> list[TaskItem]:
    """`items` itself when there is no limit or it keeps them all; else the `limit` items
    with the smallest seeded keys, in their manifest order."""
    if not limit or limit >= len(items):
        return items

    def key(item: TaskItem) -> str:
        return hashlib.sha256(f"{seed}:{split}:{item.id}".encode()).hexdigest()

    kept = {item.id for item in sorted(items, key=key)[:limit]}
    return [item for item in items if item.id in kept]
