"""The merge tree's lists: edits on their way up, labelled by where they came from
(failure or success analysts, or mixed once both were merged), with the evidence behind
them (analyses, failure counts) for the merge prompt and reflections.json."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.optimizer.reflection_groups import FAILURE, SUCCESS, Group
from core.skill.edits import Edit


@dataclass
class Proposals:
    """One list of edits on its way through the merge, labelled with where it came from."""

    kind: str  # FAILURE, SUCCESS, or MIXED once lists of both kinds were merged
    edits: list[Edit]
    analyses: list[str] = field(default_factory=list)  # the analysts' texts behind it
    failures: int = 0  # failing items behind it
    items: int = 0  # items behind it


MIXED = "mixed"
# Merge priority: failure-driven lists lead, then merged ones that hold failure edits.
PRIORITY = {FAILURE: 0, MIXED: 1, SUCCESS: 2}
ORIGIN = {
    FAILURE: "from failures",
    MIXED: "from failures and successes",
    SUCCESS: "from successes",
}


def merged_kind(batch: list[Proposals]) -> str:
    kinds = {p.kind for p in batch}
    return kinds.pop() if len(kinds) == 1 else MIXED


def tree_node(batch: list[Proposals], kind: str, edits: list[Edit]) -> dict[str, Any]:
    """A merge-tree node for reflections.json: its input lists and what came out."""
    return {
        "inputs": [{"kind": p.kind, "edits": [e.to_dict() for e in p.edits]} for p in batch],
        "output_kind": kind,
        "edits": [e.to_dict() for e in edits],
    }


def evidence_of(group: Group, analysis: str) -> dict[str, Any]:
    return {
        "analyses": [analysis] if analysis else [],
        "failures": sum(1 for r in group.results if r.hard == 0),
        "items": len(group.results),
    }


T = TypeVar("T")


async def passthrough(item: T) -> T:
    return item


async def merge_levels(
    level: list[T], size: int, merge: Callable[[list[T], int], Awaitable[T]]
) -> T | None:
    """Merge `size` lists per call, level by level, until one is left (None for none).
    Lists go in PRIORITY order (failure-driven first, a stable sort, so they lead every
    batch they share); a batch of one goes up as it is. `merge(batch, index)` gets the
    running number of the merge call. Edits, suggestions and whole candidates all merge
    this way; only what one call does with its batch differs."""
    level = sorted(level, key=lambda p: PRIORITY[p.kind])  # type: ignore[attr-defined]
    index = 0
    while len(level) > 1:
        tasks = []
        for start in range(0, len(level), size):
            batch = level[start : start + size]
            if len(batch) == 1:
                tasks.append(passthrough(batch[0]))
            else:
                tasks.append(merge(batch, index))
                index += 1
        level = sorted(await asyncio.gather(*tasks), key=lambda p: PRIORITY[p.kind])  # type: ignore[attr-defined]
    return level[0] if level else None
