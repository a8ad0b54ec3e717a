"""The validation gate: keep a candidate only if it scores strictly better (DESIGN §4).

Early decision: while the candidate's validation items come in, reject as soon as even a
perfect score on every remaining item could not beat the best. Scores are summed exactly
(`Fraction` of each float) and both the early test and the final test compare against the
same threshold, `best * n + n * TIE_TOLERANCE`; since no item scores above 1, an early
reject implies a full-scoring reject, so the decisions are identical by construction.
The tolerance makes "ties reject" hold for float noise too: a best of 7/30 stored as a
float must not let another 7-of-30 candidate through because of the last bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from core.config import GateConfig

TIE_TOLERANCE = Fraction(1, 10**9)  # mean improvements smaller than this count as ties

K = TypeVar("K")


def item_metric(hard: float, soft: float, gate: GateConfig) -> float:
    """One item's gate metric in [0, 1] (clamped: a weighted mix may round past 1.0)."""
    if gate.metric == "hard":
        value = hard
    elif gate.metric == "soft":
        value = soft
    else:
        value = (1.0 - gate.soft_weight) * hard + gate.soft_weight * soft
    return min(1.0, max(0.0, float(value)))


@dataclass(frozen=True)
class GateDecision:
    accepted: bool
    best_before: float
    candidate_score: float | None  # exact mean over all items; None if decided early
    items_scored: int
    items_total: int
    rollouts_saved: int
    reason: str


class EarlyGate:
    """Feed per-item metric values (any order); ask `decided()` after each one."""

    def __init__(
        self,
        best: float,
        items_total: int,
        early_decide: bool = True,
        margin: Fraction = Fraction(0),
    ) -> None:
        """`margin` is added to `best` once, exactly, for the whole candidate: a per-skill
        term of the gate (the density term, core.training.candidate_gate) folded into the
        threshold, so early rejects stay exactly the full decision's."""
        if math.isnan(best) or best == math.inf:
            raise ValueError(f"best score must be a number below +inf, got {best}")
        if items_total < 0:
            raise ValueError("items_total must not be negative")
        self.best = best
        self.items_total = items_total
        self.early_decide = early_decide
        self.margin = Fraction(margin)
        self._sum = Fraction(0)
        self._count = 0
        # best = -inf means "nothing to beat yet": any complete candidate is accepted.
        self._threshold = (
            None
            if best == -math.inf
            else (Fraction(best) + self.margin) * items_total + TIE_TOLERANCE * items_total
        )

    @property
    def items_scored(self) -> int:
        return self._count

    def add(self, value: float) -> None:
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise ValueError(f"gate metric values must be in [0, 1], got {value}")
        if self._count >= self.items_total:
            raise ValueError(f"more values than the {self.items_total} items to score")
        self._sum += Fraction(value)
        self._count += 1

    def decided(self) -> GateDecision | None:
        """The decision once it is certain: early rejects only, the final one when complete."""
        remaining = self.items_total - self._count
        if self.items_total == 0:
            return self._decision(False, None, "rejected: there are no validation items to score")
        cannot_win = self._threshold is not None and self._sum + remaining <= self._threshold
        if remaining == 0:
            score = float(self._sum / self.items_total)
            if cannot_win:
                return self._decision(
                    False,
                    score,
                    f"rejected: {score:.4f} does not beat best {self.best:.4f} (ties reject)",
                )
            return self._decision(True, score, f"accepted: {score:.4f} > best {self.best:.4f}")
        if self.early_decide and cannot_win:
            bound = float((self._sum + remaining) / self.items_total)
            return self._decision(
                False,
                None,
                f"rejected early after {self._count}/{self.items_total} items: at most "
                f"{bound:.4f} even if every remaining item scores 1, best is {self.best:.4f}",
            )
        return None

    def finish(self) -> GateDecision:
        decision = self.decided()
        if decision is None:
            raise RuntimeError(f"gate undecided: {self._count}/{self.items_total} items scored")
        return decision

    def _decision(self, accepted: bool, score: float | None, reason: str) -> GateDecision:
        return GateDecision(
            accepted=accepted,
            best_before=self.best,
            candidate_score=score,
            items_scored=self._count,
            items_total=self.items_total,
            rollouts_saved=self.items_total - self._count,
            reason=reason,
        )


def compare_items(before: dict[K, float], after: dict[K, float]) -> tuple[int, int]:
    """(improved, regressed) counts over the items scored in both."""
    improved = regressed = 0
    for item, old in before.items():
        if item not in after:
            continue
        if after[item] > old:
            improved += 1
        elif after[item] < old:
            regressed += 1
    return improved, regressed
