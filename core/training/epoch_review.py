"""End of an epoch (DESIGN §4): slow update and meta notes.

As published, the first epoch's end reviews nothing (there is no earlier epoch's end to
compare with: no slow update call, no meta notes, so the notes first act in the third
epoch); from the second on, the slow update runs at the end of every epoch, the last one
included: its guidance then reaches the final skill, which the finish gates against the
best. The meta notes only feed the optimizer's next-epoch prompts, so after the last
epoch (no next epoch) none are written. `slow_update.after_first_epoch`
(configs/features/early_epoch_review.yaml) reviews the first epoch's end too.

Both read the same evidence: the epoch's starting skill and the current one rolled out on
one seeded sample of train items, paired per item, and filtered by the
`longitudinal_pair_policy` (published: mixed = all pairs; changed = improved and
regressed only, topped up from the rest of the train split; unchanged = the others). The
slow update rewrites only the protected slow-update block; as published it goes into the
current skill ungated (no val pass: the finish gates the final skill), or with
`slow_update.gated` must pass the gate like any candidate; the meta notes never enter the target's skill, they go to the
optimizer's next prompts, and are shown the skill the next epoch starts from and the
candidates the gate rejected this epoch.
"""

from __future__ import annotations

import dataclasses
import random

from core.environment.contract import RolloutResult, TaskItem
from core.optimizer.rejected_buffer import RejectedEditBuffer
from core.optimizer.strategy import EpochContext, EpochPair
from core.run.events import EpochFinished
from core.skill.document import SkillError
from core.skill.protected_blocks import SLOW_UPDATE_BLOCK, read_block, strip_markers, write_block
from core.skill.validation import validate_candidate
from core.training.candidate_gate import judge_candidate
from core.training.context import TrainingRun

# The outcomes each longitudinal_pair_policy keeps (published names in docs/how-it-works/fidelity.md).
POLICY_OUTCOMES = {
    "mixed": frozenset({"improved", "regressed", "still_failing", "still_passing"}),
    "changed": frozenset({"improved", "regressed"}),
    "unchanged": frozenset({"still_failing", "still_passing"}),
}


def pair_outcome(before: RolloutResult, after: RolloutResult) -> str:
    """As published, an item passes when its hard score is not 0: a partial score that
    rises (0.5 -> 1.0) is still passing, not improved."""
    passed, passes = before.hard != 0, after.hard != 0
    if passes and not passed:
        return "improved"
    if passed and not passes:
        return "regressed"
    return "still_passing" if passes else "still_failing"


async def epoch_pairs(
    tr: TrainingRun, epoch: int, previous: str, current: str, step: int
) -> tuple[list[EpochPair], list[EpochPair]]:
    """(the pairs the prompts see, every pair rolled out). The sample is seeded by run
    seed and epoch; policy `changed` tops it up towards `sample_size` changed pairs by
    rolling out the rest of the train split in a seeded order, as many items at a time as
    are still missing, and stops when it has enough or the split is spent."""
    cfg = tr.cfg.slow_update
    train = tr.train_items
    target = min(cfg.sample_size, len(train))
    sample = random.Random(f"slow:{tr.config.run.seed}:{epoch}").sample(train, target)
    keep = POLICY_OUTCOMES[cfg.longitudinal_pair_policy]

    async def paired(items: list[TaskItem]) -> list[EpochPair]:
        before = await tr.runner.run(items, previous, split="train", phase="slow_update", step=step)
        after = await tr.runner.run(items, current, split="train", phase="slow_update", step=step)
        return [
            EpochPair(item_id=b.item_id, before=b, after=a, outcome=pair_outcome(b, a))
            for b, a in zip(before, after, strict=True)
        ]

    every = await paired(sample)
    kept = [p for p in every if p.outcome in keep]
    if cfg.longitudinal_pair_policy == "changed":
        seen = {i.id for i in sample}
        rest = [i for i in train if i.id not in seen]
        random.Random(f"slow-topup:{tr.config.run.seed}:{epoch}").shuffle(rest)
        while len(kept) < target and rest:
            chunk, rest = rest[: target - len(kept)], rest[target - len(kept) :]
            more = await paired(chunk)
            every += more
            kept += [p for p in more if p.outcome in keep]
        kept = kept[:target]
    return kept, every


async def review_epoch(tr: TrainingRun, epoch: int) -> None:
    """Finish `epoch` (0-based): slow update (every epoch) and meta notes (unless it is
    the last); then emit EpochFinished, start the next epoch from the current skill and
    persist."""
    s = tr.state
    cfg = tr.cfg
    accepted: bool | None = None
    notes = ""
    step_marker = s.next_step - 1  # the epoch's last step: where its events belong
    reviewed = epoch > 0 or cfg.slow_update.after_first_epoch
    run_meta = reviewed and cfg.meta_skill.enabled and epoch + 1 < cfg.epochs
    # A strategy that never writes guidance (fewshot) needs no pairs for it: after the
    # last epoch (no meta notes either) its epoch end rolls out nothing.
    run_slow = (
        reviewed and cfg.slow_update.enabled and getattr(tr.strategy, "writes_guidance", True)
    )
    if run_slow or run_meta:
        review = s.epoch_review if (s.epoch_review or {}).get("epoch") == epoch else None
        if review is None:  # a fresh epoch end (else resumed past its slow update)
            review = {
                "epoch": epoch,
                "from_version": s.current_version,
                "rejected": tr.buffer.render_rejections(cfg.optimizer.rejected_buffer_chars),
            }
        previous = tr.skill_text(s.epoch_start_version)
        current = tr.skill_text(review["from_version"])
        pairs, every = await epoch_pairs(tr, epoch, previous, current, step_marker)
        shown = {id(p) for p in pairs}
        tr.rd.write_step_json(
            step_marker,
            "slow_update_pairs.json",
            [
                {
                    "item_id": p.item_id,
                    "outcome": p.outcome,
                    "shown": id(p) in shown,  # kept by longitudinal_pair_policy
                    "before": {"hard": p.before.hard, "prediction": p.before.prediction},
                    "after": {"hard": p.after.hard, "prediction": p.after.prediction},
                }
                for p in every
            ],
        )
        guidance_now = read_block(current, SLOW_UPDATE_BLOCK) or ""
        ctx = EpochContext(
            epoch=epoch,
            seed=tr.config.run.seed + epoch,
            previous_skill=previous,
            current_skill=current,
            pairs=pairs,
            current_guidance=guidance_now,
            meta_notes=s.meta_notes,
            emit=tr.emit,
            step=step_marker,
            rejected=review["rejected"],
        )
        if run_slow:
            if "accepted" not in review:
                review["accepted"] = await _slow_update(tr, ctx, guidance_now, step_marker)
                if run_meta:  # a boundary: a stop in the meta call keeps this decision
                    s.epoch_review = review
                    tr.persist()
            accepted = review["accepted"]
        if run_meta:
            if tr.current != current:  # the slow update's guidance is in the next start
                ctx = dataclasses.replace(ctx, next_skill=tr.current)
            notes = await tr.strategy.meta_notes(ctx)
            s.meta_notes = notes
    s.epoch_review = None
    tr.emit(
        EpochFinished(
            epoch=epoch,
            best_val=s.best_score or 0.0,
            slow_update_accepted=accepted,
            meta_notes=notes,
        )
    )
    s.epochs_reviewed = epoch + 1
    s.epoch_start_version = s.current_version
    tr.buffer = RejectedEditBuffer()  # the rejected-edit buffer is per epoch
    s.last_apply_report = None  # so is the retry list: the next epoch starts afresh
    tr.persist()
    tr.budget_event()


async def _slow_update(
    tr: TrainingRun, ctx: EpochContext, guidance_now: str, step: int
) -> bool | None:
    guidance = strip_markers(await tr.strategy.slow_update(ctx) or "")
    if not guidance or guidance == guidance_now.strip():
        return None
    current = tr.current
    try:
        candidate = write_block(current, SLOW_UPDATE_BLOCK, guidance)
    except SkillError as exc:  # the skill's own markers are broken: refuse, never raise
        reason = f"invalid candidate: {exc}"
        tr.buffer.add_rejection(step, [], None, tr.state.best_score or 0.0, reason)
        tr.rd.write_step_json(
            step, "slow_update_gate.json", {"step": step, "accepted": False, "reason": reason}
        )
        return False
    tr.rd.write_step_text(step, "slow_update_candidate.md", candidate)
    if not tr.cfg.slow_update.gated:
        return _apply_ungated(tr, candidate, step)
    # Gated (configs/features/gated_slow_update.yaml): like any candidate.
    mode = "strict" if tr.cfg.gate.enabled else "disabled"
    info = await judge_candidate(
        tr, candidate, step=step, edits=[], source="slow_update", mode=mode
    )
    tr.rd.write_step_json(step, "slow_update_gate.json", info)
    return bool(info["accepted"])


def _apply_ungated(tr: TrainingRun, candidate: str, step: int) -> bool:
    """Published (slow_update_gate_with_selection false): the guidance goes into the
    current skill only, with no val pass; the best skill stays the val-best one, and the
    finish's final-skill check is what can promote it. A candidate that fails free
    validation (too long, markers broken) is refused, never applied."""
    problems = validate_candidate(
        candidate,
        max_chars=tr.cfg.max_skill_chars,
        original=tr.current,
        full=tr.cfg.prevalidate,
    )
    info = {"step": step, "source": "slow_update", "mode": "ungated", "accepted": not problems}
    if problems:
        info["reason"] = "invalid candidate: " + "; ".join(problems)
        info["problems"] = problems
    else:
        tr.state.current_version = tr.add_version(candidate, step=step, source="slow_update")
        info["reason"] = "ungated (published): current only; the finish gates the final skill"
    tr.rd.write_step_json(step, "slow_update_gate.json", info)
    return not problems
