"""The significance gate (train.gate.significance: sign, configs/features/significance_gate
.yaml): a higher mean on a few dozen noisy val items is often one lucky item, and a run's
best is then the maximum of noisy estimates (the winner's curse). This gate also asks the
paired question: over the items whose score changed against the best, does the candidate
win significantly more often than it loses (exact one-sided sign test), and by at least a
minimum mean gain? It only adds rejections to the published gate, so an early reject
stays exactly the full decision.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from core.config import GateConfig
from core.sign_test import sign_test_p_greater
from core.training.gate import compare_items


@dataclass(frozen=True)
class SignificanceVerdict:
    passed: bool
    p: float
    improved: int
    regressed: int
    items_counted: int  # items whose score changed (ties left out of the test)
    gain: float
    alpha: float
    min_delta: float

    def to_dict(self) -> dict:
        return {"test": "sign", **asdict(self)}

    def reason(self) -> str:
        what = (
            f"sign test p={self.p:.4g} over {self.items_counted} changed items "
            f"({self.improved} up, {self.regressed} down), gain {self.gain:+.4f}"
        )
        if self.passed:
            return f"significant: {what}"
        if self.p > self.alpha:
            return f"rejected: not significant, {what}; alpha is {self.alpha:g}"
        return f"rejected: {what} is below the minimum gain {self.min_delta:g}"


def significance_verdict(
    gate: GateConfig, best_items: dict[str, float], candidate_items: dict[str, float]
) -> SignificanceVerdict:
    """The paired test of a fully scored candidate against the best's per-item scores."""
    improved, regressed = compare_items(best_items, candidate_items)
    shared = [i for i in best_items if i in candidate_items]
    gain = sum(candidate_items[i] - best_items[i] for i in shared) / len(shared) if shared else 0.0
    p = sign_test_p_greater(improved, regressed)
    return SignificanceVerdict(
        passed=p <= gate.alpha and gain >= gate.min_delta and gain > 0,
        p=p,
        improved=improved,
        regressed=regressed,
        items_counted=improved + regressed,
        gain=gain,
        alpha=gate.alpha,
        min_delta=gate.min_delta,
    )


async def rescored_verdict(
    tr, candidate: str, candidate_items: dict[str, float], *, step: int
) -> tuple[SignificanceVerdict, dict]:
    """gate.rescore k: the items where the best and the candidate disagree, scored k more
    times under each (repeat indices of this step's own, so never a replay), and the test
    made again on each item's mean (the best's own scores stay as they were recorded,
    so its mean stays the bar). Returns (verdict, what gate.json records)."""
    gate = tr.cfg.gate
    best_items = tr.state.best_items
    changed = [i for i in tr.val_items if candidate_items.get(i.id) != best_items.get(i.id)]
    repeats = range(1000 * (step + 1), 1000 * (step + 1) + gate.rescore)
    runner = tr.runner
    extra = {
        "best": await runner.resample(
            changed, tr.best, repeats, gate_cfg=gate, phase="gate", step=step
        ),
        "candidate": await runner.resample(
            changed, candidate, repeats, gate_cfg=gate, phase="gate", step=step
        ),
    }

    def averaged(items: dict[str, float], more: dict[str, list[float]]) -> dict[str, float]:
        return {
            i: (v + sum(more.get(i, []))) / (1 + len(more.get(i, []))) for i, v in items.items()
        }

    new_best = averaged(best_items, extra["best"])
    new_candidate = averaged(candidate_items, extra["candidate"])
    verdict = significance_verdict(gate, new_best, new_candidate)
    record = {
        "items": len(changed),
        "times": gate.rescore,
        "rollouts": 2 * len(changed) * gate.rescore,
    }
    return verdict, record
