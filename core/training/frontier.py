"""The Pareto frontier of candidate skills (train.pareto, configs/features/pareto.yaml).

The published loop keeps one best skill: a candidate that fixes items the best fails but
loses a few others is thrown away, with what it knew. The frontier keeps every candidate
no other beats on every val item (non-dominated over per-item scores), bounded in size;
each step's parent is drawn from it, weighted by the items each member wins, and two
members that win on different items can be merged into one candidate (the optimizer
writes it, the gate judges it). The best is still the member with the highest mean.

Members are {"version": skill version, "items": {item id: metric}} in TrainState.frontier.
"""

from __future__ import annotations

import random
from typing import Any

Member = dict[str, Any]


def dominates(a: dict[str, float], b: dict[str, float]) -> bool:
    """a is at least as good as b on every item and better on one."""
    shared = [i for i in b if i in a]
    return all(a[i] >= b[i] for i in shared) and any(a[i] > b[i] for i in shared)


def win_counts(frontier: list[Member]) -> dict[int, int]:
    """For each member, the items on which it has the top score and some other member
    does not (an item every member scores alike tells them apart in nothing)."""
    counts = {m["version"]: 0 for m in frontier}
    items = set().union(*(m["items"] for m in frontier)) if frontier else set()
    for item in sorted(items):
        scores = {m["version"]: m["items"].get(item, 0.0) for m in frontier}
        top = max(scores.values())
        if all(s == top for s in scores.values()):
            continue
        for version, score in scores.items():
            if score == top:
                counts[version] += 1
    return counts


def mean_of(member: Member) -> float:
    values = list(member["items"].values())
    return sum(values) / len(values) if values else 0.0


def joins(frontier: list[Member], items: dict[str, float]) -> bool:
    """No member dominates `items` or equals it on every item."""
    return not any(dominates(m["items"], items) or m["items"] == items for m in frontier)


def add_member(
    frontier: list[Member], version: int, items: dict[str, float], *, size: int, keep: int
) -> tuple[list[Member], bool]:
    """The frontier with the candidate added if no member dominates it or equals it on
    every item (the members it dominates leave); over `size`, the member with the fewest
    wins (then the lowest mean) leaves, never `keep` (the best). Returns (frontier, joined)."""
    if not joins(frontier, items):
        return frontier, False
    kept = [m for m in frontier if m["version"] == keep or not dominates(items, m["items"])]
    kept.append({"version": version, "items": dict(items)})
    while len(kept) > size:
        wins = win_counts(kept)
        drop = min(
            (m for m in kept if m["version"] not in (keep, version)),
            key=lambda m: (wins[m["version"]], mean_of(m), -m["version"]),
        )
        kept.remove(drop)
    return kept, any(m["version"] == version for m in kept)


def pick_parent(frontier: list[Member], seed: str) -> int:
    """A member drawn with weight = its win count (+1, so a member winning nothing
    alone keeps a small chance), from a seeded generator."""
    wins = win_counts(frontier)
    versions = [m["version"] for m in frontier]
    weights = [wins[v] + 1 for v in versions]
    return random.Random(seed).choices(versions, weights=weights)[0]


def merge_pair(frontier: list[Member], done: list[list[int]]) -> tuple[int, int] | None:
    """Two members each winning items the other loses (disjoint by construction), the
    pair with the most wins on its weaker side, not merged before; None if there is none."""
    best: tuple[int, int, int] | None = None
    for i, a in enumerate(frontier):
        for b in frontier[i + 1 :]:
            pair = sorted((a["version"], b["version"]))
            if pair in done:
                continue
            a_wins = sum(1 for k, v in a["items"].items() if v > b["items"].get(k, 0.0))
            b_wins = sum(1 for k, v in b["items"].items() if v > a["items"].get(k, 0.0))
            weaker = min(a_wins, b_wins)
            if weaker and (best is None or weaker > best[0]):
                first, second = (a, b) if mean_of(a) >= mean_of(b) else (b, a)
                best = (weaker, first["version"], second["version"])
    return (best[1], best[2]) if best else None
