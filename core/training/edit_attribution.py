"""Per-edit acceptance: only edits with evidence of their own reach the staged candidate.

The gate judges a candidate as a whole, so an edit with no evidence rides along with one
that moved the gate: a Sleep night staged four rules where one had held-out evidence
(issue 37). An environment's gate rule may therefore say, edit by edit, which edits its
per-item scores support (`attribute(edits, before, after)` → the indices it drops, each
with why). The dropped edits are taken out and what is left is gated again on the same
val items (an ablation re-gate, one more scoring of val, under the run's budget), so the
staged candidate holds only supported edits and was itself scored; when nothing is left,
or what is left no longer passes the rule, the candidate is rejected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from core.skill.edits import Edit, EditStatus, apply_edits
from core.training.context import TrainingRun
from core.training.gate import GateDecision
from core.training.rollout_runner import GatedScore

# (edits, per-item metrics of the best, of the candidate) -> [(index of an edit, why dropped)]
Attribute = Callable[[list[Edit], Mapping[str, float], Mapping[str, float]], list[tuple[int, str]]]


@dataclass
class Trimmed:
    """The candidate after per-edit acceptance: its text, kept edits, scoring and decision,
    and the edits dropped ({op, content, rationale, reason}) for gate.json and the staging."""

    candidate: str
    edits: list[Edit]
    gated: GatedScore
    decision: GateDecision
    dropped: list[dict[str, Any]] = field(default_factory=list)


def attribution(rule: object) -> Attribute | None:
    return getattr(rule, "attribute", None)


async def keep_supported(
    tr: TrainingRun,
    rule: object,
    current: str,
    edits: list[Edit],
    gated: GatedScore,
    decision: GateDecision,
    *,
    step: int,
    gate_cfg: Any,
    margin: Fraction,
) -> Trimmed | None:
    """The accepted candidate without the edits the rule does not support, gated again;
    None when the rule judges no edits or supports every one (nothing changes)."""
    attribute = attribution(rule)
    if attribute is None or not edits:
        return None
    before = dict(tr.state.best_items)
    dropped_at = dict(attribute(list(edits), before, dict(gated.item_metrics)))
    if not dropped_at:
        return None
    dropped = [{**edits[i].to_dict(), "reason": why} for i, why in sorted(dropped_at.items())]
    kept = [e for i, e in enumerate(edits) if i not in dropped_at]
    said = "; ".join(f"{_excerpt(d['content'])}: {d['reason']}" for d in dropped)
    if not kept:
        reason = f"rejected: no edit has held-out evidence of its own (dropped: {said})"
        rejected = dataclasses.replace(decision, accepted=False, reason=reason)
        return Trimmed(current, [], gated, rejected, dropped)  # the caller keeps its own
    text, report = apply_edits(current, kept, tr.cfg.optimizer.edit_targets)
    kept = [o.edit for o in report.outcomes if o.status is EditStatus.APPLIED]
    again = await tr.runner.score_with_gate(
        tr.val_items, text, best=tr.state.best_score or 0.0, gate_cfg=gate_cfg, step=step,
        margin=margin,
    )  # fmt: skip
    accepted, why = rule(before, dict(again.item_metrics))  # type: ignore[operator]
    still_dropped = attribute(kept, before, dict(again.item_metrics)) if accepted else []
    if still_dropped:
        accepted = False
        why = "rejected: without the dropped edits the rest lost its evidence: " + "; ".join(
            f"{_excerpt(kept[i].content)}: {w}" for i, w in still_dropped
        )
    reason = f"{why} (re-gated without {len(dropped)} edit(s) lacking evidence: {said})"
    redecided = dataclasses.replace(again.decision, accepted=accepted, reason=reason)
    return Trimmed(text, kept, again, redecided, dropped)


def _excerpt(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[: limit - 1] + "…")
