"""Per-item scores of a run's evaluated skills, read back from events.jsonl.

Why events: every scored rollout is logged there (RolloutFinished) with its split, the
skill's hash and, at the finish, the skill's role (initial / best / final). summary.json
holds only means, and a comparison that says whether a difference is more than noise
needs the items the means were taken over.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The skills a card reports and a comparison can pair, per split.
ROLES: dict[str, tuple[str, ...]] = {
    "val": ("initial", "best"),
    "test": ("initial", "best", "final"),
}


@dataclass
class RolloutRow:
    """One scored rollout as events.jsonl logged it (trajectory left out)."""

    phase: str
    step: int
    split: str
    skill_hash: str
    skill_role: str
    item_id: str
    task_type: str
    hard: float
    soft: float
    input_tokens: int
    output_tokens: int
    cached: bool
    prediction: str

    @classmethod
    def from_event(cls, data: dict[str, Any]) -> RolloutRow:
        return cls(
            phase=str(data.get("phase", "")),
            step=int(data.get("step", 0) or 0),
            split=str(data.get("split", "")),
            skill_hash=str(data.get("skill_hash", "")),
            skill_role=str(data.get("skill_role", "") or ""),
            item_id=str(data.get("item_id", "")),
            task_type=str(data.get("task_type", "")),
            hard=float(data.get("hard", 0.0) or 0.0),
            soft=float(data.get("soft", 0.0) or 0.0),
            input_tokens=int(data.get("input_tokens", 0) or 0),
            output_tokens=int(data.get("output_tokens", 0) or 0),
            cached=bool(data.get("cached", False)),
            prediction=str(data.get("prediction", "")),
        )

    def score(self, metric: str) -> float:
        return self.soft if metric == "soft" else self.hard


def read_rollouts(events_path: Path) -> Iterator[RolloutRow]:
    """Every RolloutFinished of the log, in order; a torn or foreign line is skipped."""
    try:
        text = events_path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and data.get("type") == "RolloutFinished":
            yield RolloutRow.from_event(data)


@dataclass
class ItemScores:
    """{split: {role: {item_id: score}}} in the run's gate metric."""

    metric: str
    scores: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def of(self, split: str, role: str) -> dict[str, float]:
        return self.scores.get(split, {}).get(role, {})


def item_scores(events_path: Path, metric: str, best_val_hash: str = "") -> ItemScores:
    """The per-item scores of the initial, best and final skills. Val: the initial skill
    is what the baseline scored; the best is the skill whose hash summary.json names
    (`best_val_hash`, scored by its gate or the finish). Test: the finish's roles. A
    resumed run that scored an item again keeps the last score (the same skill and item)."""
    result = ItemScores(metric=metric)
    best_prefix = best_val_hash[:40]
    for row in read_rollouts(events_path):
        for role in _roles_of(row, best_prefix):
            split = result.scores.setdefault(row.split, {})
            split.setdefault(role, {})[row.item_id] = row.score(metric)
    return result


def _roles_of(row: RolloutRow, best_prefix: str) -> list[str]:
    """The roles a rollout scores: a baseline rollout is also the best's when no candidate
    ever won (the best skill is the initial one)."""
    if row.split == "test":
        return [row.skill_role] if row.skill_role in ROLES["test"] else []
    if row.split != "val":
        return []
    roles = ["initial"] if row.phase == "baseline" else []
    if row.skill_role == "best" or (best_prefix and row.skill_hash.startswith(best_prefix)):
        roles.append("best")
    return roles
