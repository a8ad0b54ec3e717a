"""Judging one candidate skill (DESIGN §4, steps 5-6): free validation, the gate on the
val split, then accept (new current and best, staged for review) or reject (into the
rejected-edit buffer). Step candidates and gated slow updates go through this same path.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from core.environment.contract import TaskItem
from core.run.events import CandidateProposed, GateDecided
from core.run.staging import StagedCandidate
from core.skill.document import skill_hash
from core.skill.edits import Edit
from core.skill.rule_density import leading_word_density, rule_density
from core.skill.validation import validate_candidate
from core.training.check_flips import CheckFlips, flips_from_cached
from core.training.context import TrainingRun
from core.training.edit_attribution import keep_supported
from core.training.frontier import add_member, joins
from core.training.gate import GateDecision, compare_items
from core.training.rollout_runner import GatedScore
from core.training.significance import rescored_verdict, significance_verdict


def mean(values: list[float]) -> float:
    """The mean, 0.0 for no values. Every val score of a run is this sum-then-divide (in
    item order), so equal item scores always give bit-identical means."""
    return sum(values) / len(values) if values else 0.0


def unified_diff(before: str, after: str, name: str = "SKILL.md") -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


GATE_MODES = ("strict", "disabled")


def density_margin(tr: TrainingRun, candidate: str) -> tuple[Fraction, dict[str, Any] | None]:
    """The density term (gate.density_weight w) as a margin on the best's mean val score.

    Published, the gate compares mean + w * density (leading-word share); ours, (1 - w) *
    mean + w * density (imperative share). Density is a constant of each skill, so
    "candidate beats best" is exactly mean_c > mean_b + w * (d_b - d_c), resp.
    + w / (1 - w) * (d_b - d_c): one exact Fraction added to the threshold, and the early
    gate's bound stays exact (every item still scores at most 1). Returns (margin, what
    gate.json records)."""
    weight = tr.cfg.gate.density_weight
    if not weight:
        return Fraction(0), None
    ours = tr.cfg.gate.density_formula == "ours"
    density = rule_density if ours else leading_word_density
    d_cand, d_best = density(candidate), density(tr.best)
    w = Fraction(weight)
    margin = (w / (1 - w) if ours else w) * (Fraction(d_best) - Fraction(d_cand))
    return margin, {
        "formula": tr.cfg.gate.density_formula,
        "weight": weight,
        "candidate": d_cand,
        "best": d_best,
        "margin": float(margin),
    }


async def judge_candidate(
    tr: TrainingRun,
    candidate: str,
    *,
    step: int,
    edits: list[Edit],
    source: str,
    mode: str = "strict",
    evidence: list[dict[str, Any]] | None = None,
    problems: list[str] | None = None,
) -> dict[str, Any]:
    """Validate (free), gate on val, then accept (new current + best, staged) or
    reject (into the rejected-edit buffer). Returns what gate.json records.

    `mode` "disabled" (the
    gate.enabled false ablation): a valid candidate becomes current whatever it scores,
    marked so in gate.json; as published, it becomes best (and is staged) only if it beats
    the best, so the ablation's test "best" is not simply its "final".

    `evidence` stands in for `edits` in the event, the buffer and the staged evidence when
    the candidate was written whole (update_mode rewrite / full_rewrite: its suggestions);
    `problems` are the caller's own findings (a rewrite that altered a protected block),
    which make the candidate invalid like those of free validation."""
    if mode not in GATE_MODES:
        raise ValueError(f"unknown gate mode {mode!r}")
    s = tr.state
    current = tr.current
    problems = list(problems or []) + validate_candidate(
        candidate, max_chars=tr.cfg.max_skill_chars, original=current, full=tr.cfg.prevalidate
    )
    shown = evidence if evidence is not None else [e.to_dict() for e in edits]
    tr.emit(
        CandidateProposed(
            step=step,
            candidate_hash=skill_hash(candidate),
            parent_hash=skill_hash(current),
            edits=shown,
            diff=unified_diff(current, candidate),
            valid=not problems,
            problems=list(problems),
        )
    )
    best_before = s.best_score or 0.0
    if problems:
        reason = "invalid candidate: " + "; ".join(problems)
        tr.buffer.add_rejection(step, edits, None, best_before, reason, evidence)
        tr.emit(
            GateDecided(
                step=step,
                accepted=False,
                best_before=best_before,
                candidate_score=None,
                items_scored=0,
                items_total=len(tr.val_items),
                rollouts_saved=0,
                reason=reason,
                source=source,
            )
        )
        return {
            "step": step,
            "source": source,
            "accepted": False,
            "reason": reason,
            "problems": list(problems),
        }
    gate_cfg = tr.cfg.gate
    rule = env_gate_rule(tr)
    pareto = tr.cfg.pareto
    if pareto.enabled and not s.frontier:  # the frontier starts as the best alone
        s.frontier = [{"version": s.best_version, "items": dict(s.best_items)}]
    parent = s.current_version
    # The score is recorded, not only compared (the disabled gate; the frontier and an
    # environment's own rule, which need every item's score): score every item.
    if mode != "strict" or pareto.enabled or rule is not None:
        gate_cfg = gate_cfg.model_copy(update={"early_decide": False})
    margin, density = density_margin(tr, candidate)
    gated = await tr.runner.score_with_gate(
        tr.val_items, candidate, best=best_before, gate_cfg=gate_cfg, step=step, margin=margin
    )
    # EarlyGate decides early only to reject: an accepted candidate was scored on every
    # item, so its score is exact (it becomes the bar every later candidate must clear).
    decision = ruled(rule, gated.decision, s.best_items, gated.item_metrics)
    dropped: list[dict[str, Any]] = []
    if decision.accepted and mode == "strict" and evidence is None:
        # the environment's rule may support some edits and not others: the rest is
        # gated again without them (core/training/edit_attribution.py)
        trimmed = await keep_supported(
            tr, rule, current, candidate, edits, gated, decision,
            step=step, gate_cfg=gate_cfg, margin=margin,
        )  # fmt: skip
        if trimmed is not None:
            decision, dropped = trimmed.decision, trimmed.dropped
        if trimmed is not None and trimmed.edits:  # what is left, scored again
            s.rollouts_saved += gated.rollouts_saved
            candidate, edits, gated = trimmed.candidate, trimmed.edits, trimmed.gated
            shown = [e.to_dict() for e in edits]
    s.rollouts_saved += gated.rollouts_saved
    scored = [gated.item_metrics[i.id] for i in tr.val_items if i.id in gated.item_metrics]
    full_score = mean(scored) if len(scored) == len(tr.val_items) else None
    improved, regressed = compare_items(s.best_items, gated.item_metrics)
    becomes_best = bool(decision.accepted)
    reason = decision.reason
    verdict = None
    rescored: dict[str, Any] | None = None
    if becomes_best and tr.cfg.gate.significance != "off" and s.best_items:
        verdict = significance_verdict(tr.cfg.gate, s.best_items, gated.item_metrics)
        if verdict.passed and tr.cfg.gate.rescore:  # a lucky rollout must repeat
            verdict, rescored = await rescored_verdict(tr, candidate, gated.item_metrics, step=step)
        becomes_best = verdict.passed
        reason = f"{reason}; {verdict.reason()}" if verdict.passed else verdict.reason()
    becomes_current = becomes_best or mode == "disabled"
    if density is not None:
        reason += (
            f" (density term: candidate {density['candidate']:.3f}, best {density['best']:.3f},"
            f" weight {density['weight']:g}: the mean must beat best {density['margin']:+.4f})"
        )
    if mode == "disabled":
        best = "the new best" if becomes_best else "not the best"
        reason = f"gate disabled: accepted unconditionally, {best} ({decision.reason})"
    info: dict[str, Any] = {
        "step": step,
        "source": source,
        "mode": mode,
        "accepted": becomes_current,
        "became_best": becomes_best,
        "best_before": best_before,
        "candidate_score": full_score,
        "items_scored": len(scored),
        "items_total": len(tr.val_items),
        "rollouts_saved": gated.rollouts_saved,
        "items_improved": improved,
        "items_regressed": regressed,
        "reason": reason,
        "item_metrics": gated.item_metrics,
    }
    if density is not None:
        info["density"] = density
    if dropped:
        info["dropped"] = dropped
    if verdict is not None:
        info["significance"] = verdict.to_dict()
    if rescored is not None:
        info["significance"]["rescored"] = rescored
    if tr.cfg.gate.repeats > 1:
        info["repeats"] = tr.cfg.gate.repeats
    tr.rd.write_step_rollouts(
        step,
        [gated.results[i.id].to_dict() for i in tr.val_items if i.id in gated.results],
        name=f"{source}_val_rollouts.jsonl",
    )
    staged_ref = None
    if becomes_current and not becomes_best:
        s.current_version = tr.add_version(candidate, step=step, source=source)
    elif becomes_best:
        flipped = flips_from_cached(tr.runner, tr.best, tr.val_items, gated.results)
        moved = moved_items(tr.val_items, s.best_items, gated, flipped)
        version = tr.add_version(candidate, step=step, source=source)
        s.current_version = s.best_version = version
        s.best_score = full_score
        s.best_items = dict(gated.item_metrics)
        tr.rd.write_best_skill(candidate)
        # Staged before the state that records the acceptance is persisted (the ref goes
        # into that state, gate.json and GateDecided). If the step is then abandoned (kill,
        # budget cap, failure), the resumed run redoes it with the same cached results,
        # accepts the same candidate and stages it again: both stagers dedupe on
        # (run, step, source), so the staged candidate is the one the state will record.
        staged_ref = tr.stager.stage(
            StagedCandidate(
                run_id=s.run_id,
                step=step,
                skill_text=candidate,
                val_before=best_before,
                val_after=full_score,
                items_improved=improved,
                items_regressed=regressed,
                val_items=len(tr.val_items),
                moved=moved,
                edits=shown,
                summary=f"{source} {step}: val {best_before:.3f} -> {full_score:.3f}"
                + (" (gate disabled)" if mode == "disabled" else "")
                + (f" (parent v{parent})" if pareto.enabled else ""),
                source=source,
                gate="strict" if mode == "strict" else mode,
            )
        )
        s.staged_refs.append({"step": step, "source": source, "ref": staged_ref})
        info["staged_ref"] = staged_ref
    else:
        tr.buffer.add_rejection(step, edits, full_score, best_before, reason, evidence)
    if pareto.enabled and full_score is not None:
        info["parent"] = parent
        if becomes_current or joins(s.frontier, gated.item_metrics):
            # Kept as a version already when it became current (and best); else now.
            number = (
                s.current_version
                if becomes_current
                else tr.add_version(candidate, step=step, source=source)
            )
            s.frontier, joined = add_member(
                s.frontier, number, gated.item_metrics, size=pareto.size, keep=s.best_version
            )
            info["frontier"] = {
                "joined": joined,
                "version": number,
                "members": [m["version"] for m in s.frontier],
            }
    tr.emit(
        GateDecided(
            step=step,
            accepted=becomes_current,
            best_before=best_before,
            candidate_score=full_score,
            items_scored=len(scored),
            items_total=len(tr.val_items),
            rollouts_saved=gated.rollouts_saved,
            items_improved=improved,
            items_regressed=regressed,
            reason=reason,
            staged_ref=staged_ref,
            source=source,
            at_most=early_bound(scored, len(tr.val_items)) if full_score is None else None,
            p_value=verdict.p if verdict is not None else None,
            items_counted=verdict.items_counted if verdict is not None else None,
        )
    )
    return info


GateRule = Callable[[Mapping[str, float], Mapping[str, float]], tuple[bool, str]]


def env_gate_rule(tr: TrainingRun) -> GateRule | None:
    """The environment's own acceptance rule, when it has one (`gate_rule`: per-item
    metrics before and after -> (accepted, why)); it replaces "the mean beats the best",
    so every item is scored. Sleep's preference gate is one (sleep/night/preference_gate.py)."""
    return getattr(tr.env, "gate_rule", None)


def ruled(
    rule: GateRule | None,
    decision: GateDecision,
    before: Mapping[str, float],
    after: Mapping[str, float],
) -> GateDecision:
    """The gate's decision, or the environment rule's on the same full scoring."""
    if rule is None or decision.candidate_score is None:
        return decision
    accepted, why = rule(dict(before), dict(after))
    return dataclasses.replace(decision, accepted=accepted, reason=why)


def moved_items(
    items: Sequence[TaskItem],
    before: Mapping[str, float],
    gated: GatedScore,
    flips: Mapping[str, CheckFlips] | None = None,
) -> list[dict[str, Any]]:
    """The val items whose metric changed or whose mechanical checks flipped (`flips`,
    core/training/check_flips.py), with what decided the new score (the rollout's
    explanation) and which checks flipped: the staged commit lists them, so a reviewer
    sees which items moved and why."""
    out = []
    for item in items:
        after = gated.item_metrics.get(item.id)
        flipped = (flips or {}).get(item.id)
        if after is None or item.id not in before or (after == before[item.id] and not flipped):
            continue
        result = gated.results.get(item.id)
        out.append(
            {
                "id": item.id,
                "question": item.question,
                "replay": item.data.get("replay") or "",
                "before": before[item.id],
                "after": after,
                "decided_by": result.explanation if result is not None else "",
                **({"checks_flipped": flipped.to_dict()} if flipped else {}),
            }
        )
    return out


def early_bound(scored: list[float], total: int) -> float | None:
    """The most a candidate rejected after `scored` could have reached: every item left
    at 1 (the bound the early gate could not see it beat)."""
    if not scored or not total:
        return None
    return (sum(scored) + (total - len(scored))) / total
