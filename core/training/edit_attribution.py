"""Per-edit acceptance: only edits with evidence of their own reach the staged candidate.

The gate judges a candidate as a whole, so an edit with no evidence rides along with one
that moved the gate: a Sleep night staged four rules where one had held-out evidence
(issue 37). An environment's gate rule may therefore say, edit by edit, which edits its
per-item scores support (`attribute(edits, before, after)` → the indices it drops, each
with why). The dropped edits are taken out and what is left is gated again on the same
val items (one more scoring of val, under the run's budget), so the staged candidate
holds only supported edits and was itself scored; when nothing is left, or what is left
no longer passes the rule, the candidate is rejected. Where several edits claim the same
evidence (the rule's `rivals`), attribution is ambiguous: an ablation scores the candidate
without one of them, and drops it when nothing scores lower without it. The rule is also
told which mechanical checks of each item flipped between the current skill's rollout and
the candidate's (core/training/check_flips.py): a flipped check is evidence on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from core.skill.edits import Edit, EditStatus, apply_edits
from core.training.check_flips import CheckFlips, flips_from_cached, item_flips
from core.training.context import TrainingRun
from core.training.gate import GateDecision
from core.training.rollout_runner import GatedScore
from core.words import cut_marked

# (edits, per-item metrics of the best, of the candidate, the items' flipped checks)
#   -> [(index of an edit, why dropped)]
Attribute = Callable[
    [list[Edit], Mapping[str, float], Mapping[str, float], Mapping[str, CheckFlips]],
    list[tuple[int, str]],
]


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
    candidate: str,
    edits: list[Edit],
    gated: GatedScore,
    decision: GateDecision,
    *,
    step: int,
    gate_cfg: Any,
    margin: Fraction,
) -> Trimmed | None:
    """The accepted candidate without the edits the rule does not support, then without
    any edit that an ablation shows adds nothing, each time gated again; None when the
    rule judges no edits or keeps every one (nothing changes)."""
    attribute = attribution(rule)
    if attribute is None or not edits:
        return None
    scoring = _Scoring(tr, rule, attribute, current, step=step, gate_cfg=gate_cfg, margin=margin)
    trimmed = await scoring.without_unsupported(Trimmed(candidate, list(edits), gated, decision))
    if trimmed.decision.accepted:
        trimmed = await scoring.without_redundant(trimmed)
    return trimmed if trimmed.dropped else None


MAX_ABLATIONS = 2  # val scorings a candidate may spend on ablations (each a full replay)


@dataclass
class _Scoring:
    """Scores the candidate's edits applied to `current`, under the rule."""

    tr: TrainingRun
    rule: Any
    attribute: Attribute
    current: str
    step: int
    gate_cfg: Any
    margin: Fraction

    @property
    def before(self) -> dict[str, float]:
        return dict(self.tr.state.best_items)

    def flips(self, gated: GatedScore) -> dict[str, CheckFlips]:
        """The checks that flipped from the current skill's val rollouts to `gated`'s."""
        return flips_from_cached(self.tr.runner, self.current, self.tr.val_items, gated.results)

    async def score(self, edits: list[Edit]) -> tuple[str, list[Edit], GatedScore]:
        text, report = apply_edits(self.current, edits, self.tr.cfg.optimizer.edit_targets)
        applied = [o.edit for o in report.outcomes if o.status is EditStatus.APPLIED]
        gated = await self.tr.runner.score_with_gate(
            self.tr.val_items, text, best=self.tr.state.best_score or 0.0,
            gate_cfg=self.gate_cfg, step=self.step, margin=self.margin,
        )  # fmt: skip
        return text, applied, gated

    async def without_unsupported(self, t: Trimmed) -> Trimmed:
        after = dict(t.gated.item_metrics)
        dropped_at = dict(self.attribute(t.edits, self.before, after, self.flips(t.gated)))
        if not dropped_at:
            return t
        dropped = [{**t.edits[i].to_dict(), "reason": why} for i, why in sorted(dropped_at.items())]
        kept = [e for i, e in enumerate(t.edits) if i not in dropped_at]
        said = "; ".join(f"{_excerpt(d['content'])}: {d['reason']}" for d in dropped)
        if not kept:
            reason = f"rejected: no edit has held-out evidence of its own (dropped: {said})"
            rejected = dataclasses.replace(t.decision, accepted=False, reason=reason)
            return Trimmed(self.current, [], t.gated, rejected, dropped)  # the caller keeps its own
        text, kept, again = await self.score(kept)
        accepted, why = self.rule(self.before, dict(again.item_metrics))
        still = (
            self.attribute(kept, self.before, dict(again.item_metrics), self.flips(again))
            if accepted
            else []
        )
        if still:
            accepted = False
            why = "rejected: without the dropped edits the rest lost its evidence: " + "; ".join(
                f"{_excerpt(kept[i].content)}: {w}" for i, w in still
            )
        reason = f"{why} (re-gated without {len(dropped)} edit(s) lacking evidence: {said})"
        redecided = dataclasses.replace(again.decision, accepted=accepted, reason=reason)
        return Trimmed(text, kept, again, redecided, dropped)

    async def without_redundant(self, t: Trimmed) -> Trimmed:
        """Where several edits claim the same evidence (the rule's `rivals`: groups of
        edit indices), each is scored away in turn, the last proposed first, while two or
        more of its group are left: one whose absence the rule still accepts, with no val
        item scoring lower and no check failing that passed with it, added nothing and is
        dropped. At most MAX_ABLATIONS scorings."""
        rivals = getattr(self.rule, "rivals", None)
        proposed = list(t.edits)  # the groups' indices are into this list
        tried = 0
        for group in rivals(proposed) if rivals is not None else []:
            members = [proposed[i] for i in group]
            for edit in reversed(members):
                left = [e for e in members if e in t.edits]
                if tried >= MAX_ABLATIONS or len(left) < 2:
                    break
                rest = [e for e in t.edits if e != edit]
                tried += 1
                text, rest, without = await self.score(rest)
                after = dict(without.item_metrics)
                accepted, why = self.rule(self.before, after)
                lower = [i for i, m in t.gated.item_metrics.items() if after.get(i, 0.0) < m]
                lost = any(f.down for f in item_flips(t.gated.results, without.results).values())
                flipped = self.flips(without)
                if (
                    not accepted
                    or lower
                    or lost
                    or self.attribute(rest, self.before, after, flipped)
                ):
                    continue
                reason = (
                    "no evidence of its own: the candidate without it scores as well (ablation)"
                )
                redecided = dataclasses.replace(
                    without.decision,
                    accepted=True,
                    reason=f"{why} (ablation: {_excerpt(edit.content)} added nothing)",
                )
                t = Trimmed(
                    text,
                    rest,
                    without,
                    redecided,
                    [*t.dropped, {**edit.to_dict(), "reason": reason}],
                )
        return t


def _excerpt(text: str, limit: int = 60) -> str:
    return repr(cut_marked(text, limit))
