"""One training step (DESIGN §4, steps 1–7): rollout the current skill on a train
minibatch, ask the strategy for edits within the step's budget, apply them, gate the
candidate, and persist the step so a crash resumes at the next one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from core.environment.contract import ANALYST_KINDS, RolloutResult, analyst_guide
from core.optimizer.autonomous_lr import LrDecision
from core.optimizer.execution_notes import EXECUTION_NOTES_BLOCK
from core.optimizer.strategy import Proposal, ProposalContext
from core.run.events import EditApplied, LearningRateDecided, StepFinished
from core.skill.document import SkillError
from core.skill.edits import ApplyReport, Edit, EditOutcome, EditStatus, apply_edits
from core.skill.protected_blocks import block_changes, put_back_blocks, write_block
from core.training.candidate_gate import judge_candidate, mean
from core.training.context import TrainingRun
from core.training.frontier import merge_pair, pick_parent
from core.training.history import StageClock, write_history
from core.training.minibatch import batch_for_step
from core.training.schedule import edit_budget_for_step
from core.training.screen import screen_candidates, screened_out_reason


def failure_patterns(
    results: list[RolloutResult], shown: int = 3, *, model_errors_fail: bool = True
) -> str:
    """One short paragraph for the rejected-edit buffer: how many train items failed and
    a few of the evaluator's explanations (which name the reference: optimizer-only).
    Model errors count as failures as published, unless `model_errors_fail` is False."""
    answered = [r for r in results if model_errors_fail or not r.error]
    failures = [r for r in answered if r.hard == 0]
    if not failures:
        return ""
    lines = [f"{len(failures)} of {len(answered)} train items failed, e.g.:"]
    for r in failures[:shown]:
        lines.append(f"- {' '.join(r.question.split())[:100]}: {r.explanation[:200]}")
    if len(answered) < len(results):
        lines.append(f"({len(results) - len(answered)} items with a model error left out)")
    return "\n".join(lines)


def step_batches(tr: TrainingRun, step: int) -> list[list]:
    """The step's `accumulation` batches: consecutive slices of the epoch's order, as if
    each were a step of its own (one batch, accumulation 1, is exactly the old step)."""
    accumulation = tr.cfg.accumulation
    return [
        batch_for_step(
            tr.train_items,
            step * accumulation + a,
            tr.steps_per_epoch * accumulation,
            tr.cfg.batch_size,
            tr.config.run.seed,
            tr.cfg.shuffle,
        )
        for a in range(accumulation)
    ]


async def run_step(tr: TrainingRun, step: int) -> None:
    s = tr.state
    epoch = step // tr.steps_per_epoch
    if tr.cfg.pareto.enabled and len(s.frontier) > 1:  # the step's parent, by its wins
        s.current_version = pick_parent(s.frontier, f"{tr.config.run.seed}:{step}")
    current = tr.current
    clock = StageClock(tr.client.ledger, tr.rd.step_dir(step))
    batches: list[list[RolloutResult]] = []
    with clock.stage("rollout"):  # `accumulation` batches (published: gradient accumulation)
        for batch in step_batches(tr, step):
            batches.append(
                await tr.runner.run(batch, current, split="train", phase="train", step=step)
            )
    results = [r for rolled in batches for r in rolled]
    tr.rd.write_step_rollouts(step, [r.to_dict() for r in results])
    autonomous = tr.cfg.optimizer.lr_control == "autonomous"
    if autonomous:  # the strategy decides; the budget only bounds the pool it merges
        groups = math.ceil(len(results) / max(1, tr.cfg.minibatch_size))
        budget = tr.cfg.edit_budget * max(1, groups)
    else:
        budget = edit_budget_for_step(tr.cfg.schedule, s.scheduled_steps, tr.total_steps)
    proposal = Proposal(edits=[])
    if budget > 0:
        with clock.stage("reflect"):  # analysts, merge tree, ranking, learning rate
            ctx = proposal_context(tr, step, epoch, current, results, budget)
            if len(batches) > 1:  # analysts group each batch apart, as published
                ctx.batches = batches
            proposal = await tr.strategy.propose(ctx)
    if budget == 0 or proposal.merged or proposal.suggestions or proposal.candidate is not None:
        s.scheduled_steps += 1  # published: the schedule steps only where there are patches
    if autonomous:  # recorded every step, even one with nothing to choose from
        proposal.lr = proposal.lr or LrDecision(0, None, 0, reasoning="no pool this step").to_dict()
        budget = int(proposal.lr.get("count", 0))
        tr.emit(lr_event(step, proposal.lr))
    proposal.edits = proposal.edits[:budget]
    tr.rd.write_step_json(step, "reflections.json", proposal.reflections)
    tr.rd.write_step_json(
        step,
        "proposal.json",
        {
            "budget": budget,
            "lr": proposal.lr or {"control": "fixed", "count": budget},
            "merged": [e.to_dict() for e in proposal.merged],
            "edits": [e.to_dict() for e in proposal.edits],
            "suggestions": proposal.suggestions,
            "execution_notes": proposal.execution_notes,
        },
    )
    # The first point of a step that needs the baseline (the gate's bar, the state this
    # step persists): with early work it was scored beside the rollouts and analysts.
    await tr.settle_baseline()
    gate_info: dict[str, Any] = {"step": step, "accepted": False, "reason": "no edits proposed"}
    built = build_candidate(tr, step, current, proposal)
    screen: dict[str, Any] | None = None
    if tr.cfg.gate.screen and budget > 0:
        with clock.stage("screen"):
            built, screen = await screen_step(tr, step, epoch, current, batches, budget, built)
    if built.candidate is not None:
        tr.rd.write_step_text(step, "candidate.md", built.candidate)
        if built.candidate == current:
            gate_info["reason"] = "no edit applied (see apply_report.json)"
        elif screen is not None and screen["chosen"] is None:
            reason = screened_out_reason(screen)
            gate_info = {"step": step, "accepted": False, "reason": reason, "screen": screen}
            tr.buffer.add_rejection(
                step, built.applied, None, tr.state.best_score or 0.0, reason, built.evidence
            )
        else:
            with clock.stage("gate"):
                gate_info = await judge_candidate(
                    tr,
                    built.candidate,
                    step=step,
                    edits=built.applied,
                    source="step",
                    mode="strict" if tr.cfg.gate.enabled else "disabled",
                    evidence=built.evidence,
                    problems=built.problems,
                )
            if screen is not None:
                gate_info["screen"] = screen
    tr.rd.write_step_json(step, "gate.json", gate_info)
    if tr.cfg.pareto.enabled and len(s.merged_pairs) < tr.cfg.pareto.merges:
        with clock.stage("gate"):
            merged = await merge_frontier_pair(tr, step)
        if merged is not None:
            tr.rd.write_step_json(step, "merge_gate.json", merged)
    if proposal.execution_notes is not None and not tr.cfg.optimizer.notes_gated:
        add_notes_after_gate(tr, step, proposal.execution_notes)
    train_hard = mean([r.hard for r in results])
    tr.rd.write_step_json(step, "stages.json", {"train_hard": train_hard, "stages": clock.totals()})
    s.last_apply_report = built.report
    tr.buffer.add_failure_patterns(
        step, failure_patterns(results, model_errors_fail=tr.cfg.optimizer.model_errors_fail)
    )
    s.next_step = step + 1
    tr.emit(
        StepFinished(
            step=step,
            epoch=epoch,
            train_hard=train_hard,
            train_soft=mean([r.soft for r in results]),
            best_val=s.best_score or 0.0,
            accepted=bool(gate_info.get("accepted")),
            edit_budget=budget,
        )
    )
    tr.persist()
    clock.finished()  # after the state: a step killed before it is redone with its attempts
    write_history(tr.rd.path, s.next_step, s.baseline_score)
    tr.budget_event()


async def screen_step(
    tr: TrainingRun,
    step: int,
    epoch: int,
    current: str,
    batches: list[list[RolloutResult]],
    budget: int,
    first: BuiltCandidate,
) -> tuple[BuiltCandidate, dict[str, Any] | None]:
    """gate.screen: the step's other candidates (train.candidates_per_step, each proposed
    with its own seed from the same rollouts), screened with the first on the step's
    batch. Returns the candidate to judge (the best screened; the first when none passes,
    for the record) and the screen's record (None: nothing to screen)."""
    results = [r for rolled in batches for r in rolled]
    builts = [first]
    for index in range(1, tr.cfg.candidates_per_step):
        ctx = proposal_context(tr, step, epoch, current, results, budget)
        ctx.seed += 1_000_003 * index
        ctx.candidate_index = index
        if len(batches) > 1:
            ctx.batches = batches
        extra = await tr.strategy.propose(ctx)
        extra.edits = extra.edits[:budget]
        builts.append(build_candidate(tr, step, current, extra))
    judged = [b for b in builts if b.candidate is not None and b.candidate != current]
    if not judged:
        return first, None
    by_id = {item.id: item for batch in step_batches(tr, step) for item in batch}
    items = [by_id[r.item_id] for r in results]
    chosen, record = await screen_candidates(
        tr, step, [b.candidate for b in judged], items, results
    )
    pick = judged[chosen.index] if chosen is not None else judged[0]
    if pick.report is not None:  # the apply report of the candidate judged
        tr.rd.write_step_json(step, "apply_report.json", pick.report)
    return pick, record


async def merge_frontier_pair(tr: TrainingRun, step: int) -> dict[str, Any] | None:
    """train.pareto merges: two frontier members winning on different val items, combined
    by the optimizer (its `merge_skills`, checked at setup) into one candidate the gate
    judges, from the stronger of the two as parent. None when there is no such pair."""
    pair = merge_pair(tr.state.frontier, tr.state.merged_pairs)
    if pair is None:
        return None
    first, second = pair
    tr.state.merged_pairs.append(sorted(pair))
    candidate = await tr.strategy.merge_skills(tr.skill_text(first), tr.skill_text(second))
    tr.state.current_version = first
    if candidate == tr.current:
        return {
            "step": step,
            "source": "merge",
            "accepted": False,
            "parents": list(pair),
            "reason": "the merge changed nothing",
        }
    tr.rd.write_step_text(step, "merge_candidate.md", candidate)
    info = await judge_candidate(
        tr,
        candidate,
        step=step,
        edits=[],
        source="merge",
        evidence=[{"kind": "merge", "parents": [first, second]}],
    )
    return {**info, "parents": list(pair)}


def lr_event(step: int, lr: dict[str, Any]) -> LearningRateDecided:
    """The strategy's recorded decision (proposal.json "lr") as the Run screen's event."""
    return LearningRateDecided(
        step=step,
        count=int(lr.get("count", 0)),
        pool=int(lr.get("pool", 0)),
        asked=lr.get("asked"),
        confidence=str(lr.get("confidence") or ""),
        reasoning=str(lr.get("reasoning") or ""),
        risks=str(lr.get("risks") or ""),
        error=str(lr.get("error") or ""),
    )


@dataclass
class BuiltCandidate:
    candidate: str | None  # None: nothing to judge
    applied: list[Edit] = field(default_factory=list)  # only applied edits are evidence
    evidence: list[dict[str, Any]] | None = None  # a whole-skill candidate's suggestions
    problems: list[str] = field(default_factory=list)
    report: list[dict[str, Any]] | None = None  # the apply report, for the next step


def build_candidate(tr: TrainingRun, step: int, current: str, proposal: Proposal) -> BuiltCandidate:
    """The step's candidate: the edits applied (patch mode) or the strategy's whole text
    (rewrite modes: its protected blocks must be byte-identical to the current skill's),
    then, with skill-aware reflection, the new execution-notes block written into it."""
    built = BuiltCandidate(None)
    if proposal.candidate is not None:
        # As published, a rewrite that altered a protected block gets the block put back.
        built.candidate = put_back_blocks(current, proposal.candidate)
        built.evidence = proposal.suggestions
        built.problems = block_changes(current, built.candidate)
    elif proposal.edits:
        matching = tr.cfg.optimizer.edit_targets
        layout = "published" if matching == "first" else "tidy"  # strict_edit_targets: ours
        candidate, report = apply_edits(current, proposal.edits, matching, layout)
        for i, outcome in enumerate(report.outcomes):
            tr.emit(
                EditApplied(
                    step=step,
                    index=i,
                    op=outcome.edit.op,
                    status=outcome.status.value,
                    reason=outcome.reason,
                )
            )
        tr.rd.write_step_json(step, "apply_report.json", report.to_dict())
        built.candidate, built.report = candidate, report.to_dict()
        # Only edits that were applied are evidence (buffer, staged commit, events): an
        # unmatched edit was never tested, and the next step asks for it again.
        built.applied = [o.edit for o in report.outcomes if o.status is EditStatus.APPLIED]
    if proposal.execution_notes is not None and tr.cfg.optimizer.notes_gated and not built.problems:
        base = current if built.candidate is None else built.candidate
        try:
            built.candidate = write_block(base, EXECUTION_NOTES_BLOCK, proposal.execution_notes)
        except SkillError as exc:  # the skill's own markers are broken: invalid, never raise
            built.candidate, built.problems = base, [str(exc)]
        built.evidence = (built.evidence or [e.to_dict() for e in built.applied]) + [
            {"kind": "execution_notes", "notes": proposal.execution_notes}
        ]
    return built


def add_notes_after_gate(tr: TrainingRun, step: int, notes: str) -> None:
    """Published skill-aware reflection: the step's execution notes go into the current
    skill (whatever the gate decided) as a version of their own, ungated; the best skill
    keeps its own text. Recorded in the step's notes.json."""
    current = tr.current
    try:
        noted = write_block(current, EXECUTION_NOTES_BLOCK, notes)
    except SkillError as exc:  # the skill's own markers are broken: skip, never raise
        tr.rd.write_step_json(step, "notes.json", {"added": False, "reason": str(exc)})
        return
    if noted != current:
        tr.state.current_version = tr.add_version(noted, step=step, source="notes")
    tr.rd.write_step_json(step, "notes.json", {"added": noted != current, "notes": notes})


def proposal_context(tr: TrainingRun, step, epoch, current, results, budget) -> ProposalContext:
    last = None
    if tr.state.last_apply_report:
        last = ApplyReport(
            tuple(
                EditOutcome(Edit.from_dict(o), EditStatus(o["status"]), o.get("reason", ""))
                for o in tr.state.last_apply_report
            )
        )
    return ProposalContext(
        step=step,
        epoch=epoch,
        seed=tr.config.run.seed + step,
        skill_text=current,
        results=results,
        budget=budget,
        edit_budget=tr.cfg.edit_budget,
        minibatch_size=tr.cfg.minibatch_size,
        merge_batch_size=tr.cfg.merge_batch_size,
        # The buffer ablation: analysts never see it (it is still kept, for the record).
        rejected_buffer=(
            tr.buffer.render(tr.cfg.optimizer.rejected_buffer_chars)
            if tr.cfg.optimizer.rejected_buffer
            else ""
        ),
        meta_notes=tr.state.meta_notes,
        last_apply_report=last,
        emit=tr.emit,
        lr_control=tr.cfg.optimizer.lr_control,
        ranking=tr.cfg.optimizer.ranking,
        model_errors_fail=tr.cfg.optimizer.model_errors_fail,
        analyst_guides={kind: analyst_guide(tr.env, kind) for kind in ANALYST_KINDS},
    )
