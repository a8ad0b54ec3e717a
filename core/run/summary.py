"""What a run produced, as `summary.json` and as the value `run_training` returns, plus
the per-task-type buckets evaluations report."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from core.environment.contract import RolloutResult


@dataclass
class EvalResult:
    """A skill's scores on one split: means over items, and the same per task type."""

    split: str
    hard: float
    soft: float
    n: int
    buckets: dict[str, dict[str, float]] = field(default_factory=dict)  # type -> hard/soft/n
    skill_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_results(
        cls, split: str, results: list[RolloutResult], skill_hash: str = ""
    ) -> EvalResult:
        buckets: dict[str, dict[str, float]] = {}
        for r in results:
            b = buckets.setdefault(r.task_type, {"hard": 0.0, "soft": 0.0, "n": 0})
            b["hard"] += r.hard
            b["soft"] += r.soft
            b["n"] += 1
        for b in buckets.values():
            b["hard"] /= b["n"]
            b["soft"] /= b["n"]
        n = len(results)
        return cls(
            split=split,
            hard=sum(r.hard for r in results) / n if n else 0.0,
            soft=sum(r.soft for r in results) / n if n else 0.0,
            n=n,
            buckets=dict(sorted(buckets.items())),
            skill_hash=skill_hash,
        )


@dataclass
class RunSummary:
    run_id: str
    status: str  # "finished" | "stopped" | "waiting" (for handoff answers)
    env: str
    strategy: str
    metric: str  # the gate metric the val scores below are in
    baseline_val: float | None
    best_val: float | None
    final_val: float | None
    best_version: int
    steps_done: int
    total_steps: int
    accepted_steps: list[int] = field(default_factory=list)  # steps whose candidate won
    # Epoch ends whose slow update became current (published, ungated: every valid one;
    # gated: one that beat the best), by the epoch's last step, as their GateDecided and staged entries.
    # Accepted into the running skill, not necessarily into the result: see final_check.
    accepted_slow_updates: list[int] = field(default_factory=list)
    # The finish's check of the final skill when it differs from the best (the
    # FinalSkillChecked event): {outcome: kept|rejected|invalid, final_val, best_val,
    # slow_updates, reason}; empty when the final skill is the best one. With "rejected"
    # the slow updates listed stayed in the running skill but are not in best_skill.md.
    final_check: dict[str, Any] = field(default_factory=dict)
    # Every staged candidate, {"step", "source", "ref"}: also accepted slow updates
    # ("slow_update", at their epoch's last step) and the finish's promotion ("final").
    staged: list[dict[str, Any]] = field(default_factory=list)
    val: dict[str, Any] = field(default_factory=dict)  # best skill's EvalResult on val
    test: dict[str, dict[str, Any]] = field(default_factory=dict)  # initial/best/final
    rollouts_saved: int = 0  # by the early gate
    # Distinct rollouts (skill, item, split) whose target reply hit its token limit.
    truncated_rollouts: dict[str, int] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)  # ledger snapshot incl. per role
    cost_usd: float = 0.0
    wall_time_s: float = 0.0
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
