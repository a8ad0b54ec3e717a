"""The merge tree's lists: edits on their way up, labelled by where they came from
(failure or success analysts, or mixed once both were merged), with the evidence behind
them (analyses, failure counts) for the merge prompt and reflections.json, and each edit's
support: the analyst groups that proposed it or the edits merged into it.

Two shapes (train.optimizer.merges): `trees`, the published one, merges the failure lists
in a tree of their own and the success lists in another, then the two results in one final
merge, failures first; `capped` (configs/features/capped_merges.yaml) merges all lists in
one tree, failure lists leading every batch they share (merge_levels)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.optimizer.edit_lists import edit_key
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
    # Per edit, the analyst groups ("failure 0", ...) behind it; [] = not tracked.
    sources: list[frozenset[str]] = field(default_factory=list)

    def support(self) -> list[int]:
        """How many groups proposed each edit or the edits merged into it (at least 1)."""
        return [max(1, len(s)) for s in self.sources] or [1] * len(self.edits)


def dedupe_lists(lists: list[Proposals]) -> list[Proposals]:
    """Each edit once (op, target, content), in the first list that proposed it, with the
    groups of every list that proposed it; lists left empty are dropped."""
    first: dict[tuple[str, str, str], tuple[Proposals, int]] = {}
    out = []
    for p in lists:
        edits: list[Edit] = []
        sources: list[frozenset[str]] = []
        for edit, groups in zip(p.edits, p.sources or [frozenset()] * len(p.edits), strict=True):
            key = edit_key(edit)
            if key in first:
                owner, i = first[key]
                owner.sources[i] = owner.sources[i] | groups
                continue
            first[key] = (p, len(edits))
            edits.append(edit)
            sources.append(groups)
        p.edits, p.sources = edits, sources
        if edits:
            out.append(p)
    return out


def sources_of(outputs: list[Edit], batch: list[Proposals]) -> list[frozenset[str]]:
    """The groups behind each edit a merge wrote: those of the input edits it repeats,
    else of the inputs sharing its target (a merge combines same-target edits into one),
    else of the inputs with its content. A merge that rewords and moves an edit loses
    that edit's support: the model does not say what it combined."""
    inputs = [
        (e, s)
        for p in batch
        for e, s in zip(p.edits, p.sources or [frozenset()] * len(p.edits), strict=True)
    ]
    out = []
    for edit in outputs:
        found: frozenset[str] = frozenset()
        for key in (edit_key, lambda e: e.target or None, lambda e: e.content or None):
            mine = key(edit)
            if mine is not None:
                found = frozenset().union(*(s for e, s in inputs if key(e) == mine))
            if found:
                break
        out.append(found)
    return out


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
    index = 0  # the first merge's number; merge_trees numbers its trees' merges itself
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


async def merge_trees(
    level: list[T], size: int, merge: Callable[[list[T], int], Awaitable[T]]
) -> T | None:
    """The published shape: the failure lists merged in a tree of their own and the
    success lists in another (concurrently), then the two in one final merge, failures
    first. Merges are numbered in the order they are started."""
    counter = itertools.count()

    def numbered(batch: list[T], _index: int) -> Awaitable[T]:
        return merge(batch, next(counter))

    trees = await asyncio.gather(
        *(
            merge_levels([p for p in level if p.kind == kind], size, numbered)  # type: ignore[attr-defined]
            for kind in (FAILURE, SUCCESS)
        )
    )
    roots = [t for t in trees if t is not None]
    if len(roots) < 2:
        return roots[0] if roots else None
    return await merge(roots, next(counter))
