"""The mechanical checks of a val item that flipped between two skills' rollouts.

Why: an edit's evidence used to be its item's score going from failing to passing by
more than a judge's step, and a judge's score is noisy (a 0.5 → 0.6 on a reply it still
said broke the rubric kept a rule, issue 37). A mechanical check (the diff adds
`logging`, the agent ran `make test`, the answer's first line is short) says exactly
what changed: one that flips from failing to passing is evidence for the edit on its
own, one that flips from passing to failing is evidence against it, whatever the judge
said. The results come from the rollouts (RolloutResult.checks): the candidate's from its
scoring, the current skill's from the rollout cache, where its val scoring left them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.environment.contract import RolloutResult, TaskItem
from core.skill.document import skill_hash


@dataclass(frozen=True)
class CheckFlips:
    """One item's checks that went from failing to passing (`up`) and back (`down`)."""

    up: tuple[str, ...] = ()
    down: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.up or self.down)

    def lines(self) -> list[str]:
        return [f"check {c} failing → passing" for c in self.up] + [
            f"check {c} passing → failing" for c in self.down
        ]

    def to_dict(self) -> dict[str, list[str]]:
        return {"up": list(self.up), "down": list(self.down)}

    @classmethod
    def from_dict(cls, data: Any) -> CheckFlips:
        if not isinstance(data, dict):
            return cls()
        return cls(tuple(map(str, data.get("up", []))), tuple(map(str, data.get("down", []))))


def check_flips(before: Mapping[str, bool], after: Mapping[str, bool]) -> CheckFlips:
    """The checks applied to both rollouts that changed verdict."""
    both = [c for c in after if c in before]
    return CheckFlips(
        tuple(c for c in both if after[c] and not before[c]),
        tuple(c for c in both if before[c] and not after[c]),
    )


def item_flips(
    before: Mapping[str, RolloutResult], after: Mapping[str, RolloutResult]
) -> dict[str, CheckFlips]:
    """Each item whose checks flipped from `before`'s rollout to `after`'s."""
    out = {}
    for item, result in after.items():
        old = before.get(item)
        flips = check_flips(old.checks, result.checks) if old is not None else CheckFlips()
        if flips:
            out[item] = flips
    return out


def flips_from_cached(
    runner: Any, text: str, items: Iterable[TaskItem], after: Mapping[str, RolloutResult]
) -> dict[str, CheckFlips]:
    """Each item whose checks flipped from `text`'s cached val rollouts to `after`'s."""
    return item_flips(_cached_val_results(runner, text, items), after)


def _cached_val_results(
    runner: Any, text: str, items: Iterable[TaskItem]
) -> dict[str, RolloutResult]:
    """`text`'s val rollouts as the rollout cache holds them (an item missing: not there)."""
    cache = getattr(runner, "cache", None)
    if cache is None:
        return {}
    shash = skill_hash(text)
    found = {item.id: cache.get(shash, item.id, "val") for item in items}
    return {item: result for item, result in found.items() if result is not None}
