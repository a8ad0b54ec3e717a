"""End of an epoch (DESIGN §4, from the second epoch on): slow update and meta notes.

Both read the same evidence: the previous epoch's skill and the current one rolled out on
one seeded sample of train items, paired per item. The slow update rewrites only the
protected slow-update block and, by default, must pass the gate like any candidate; the
meta notes never enter the target's skill, they go to the optimizer's next prompts.
"""

from __future__ import annotations

import random

from core.environment.contract import RolloutResult
from core.optimizer.rejected_buffer import RejectedEditBuffer
from core.optimizer.strategy import EpochContext, EpochPair
from core.run.events import EpochFinished
from core.skill.protected_blocks import SLOW_UPDATE_BLOCK, read_block, write_block
from core.training.candidate_gate import judge_candidate
from core.training.context import TrainingRun


def pair_outcome(before: RolloutResult, after: RolloutResult) -> str:
    if after.hard > before.hard:
        return "improved"
    if after.hard < before.hard:
        return "regressed"
    return "still_passing" if after.hard > 0 else "still_failing"


async def review_epoch(tr: TrainingRun, epoch: int) -> None:
    """Finish `epoch` (0-based): for epoch >= 1 run slow update and meta notes, then emit
    EpochFinished, start the next epoch from the current skill and persist."""
    s = tr.state
    cfg = tr.cfg
    accepted: bool | None = None
    notes = ""
    step_marker = s.next_step - 1  # the epoch's last step: where its events belong
    if epoch >= 1 and (cfg.slow_update.enabled or cfg.meta_skill.enabled):
        previous = tr.skill_text(s.epoch_start_version)
        current = tr.current
        train = tr.train_items
        sample = random.Random(f"slow:{tr.config.run.seed}:{epoch}").sample(
            train, min(cfg.slow_update.sample_size, len(train))
        )
        before = await tr.runner.run(
            sample, previous, split="train", phase="slow_update", step=step_marker
        )
        after = await tr.runner.run(
            sample, current, split="train", phase="slow_update", step=step_marker
        )
        pairs = [
            EpochPair(item_id=b.item_id, before=b, after=a, outcome=pair_outcome(b, a))
            for b, a in zip(before, after, strict=True)
        ]
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
        )
        if cfg.slow_update.enabled:
            accepted = await _slow_update(tr, ctx, guidance_now, step_marker)
        if cfg.meta_skill.enabled:
            notes = await tr.strategy.meta_notes(ctx)
            s.meta_notes = notes
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
    tr.persist()
    tr.budget_event()


async def _slow_update(
    tr: TrainingRun, ctx: EpochContext, guidance_now: str, step: int
) -> bool | None:
    guidance = await tr.strategy.slow_update(ctx)
    if guidance is None or not guidance.strip() or guidance.strip() == guidance_now.strip():
        return None
    current = tr.current
    candidate = write_block(current, SLOW_UPDATE_BLOCK, guidance.strip())
    tr.rd.write_step_text(step, "slow_update_candidate.md", candidate)
    if tr.cfg.slow_update.gated:
        info = await judge_candidate(tr, candidate, step=step, edits=[], source="slow_update")
        tr.rd.write_step_json(step, "slow_update_gate.json", info)
        return bool(info["accepted"])
    # Ungated: the guidance becomes current without a val score; the finish compares the
    # final skill with the best and promotes it only if it scores strictly better.
    s = tr.state
    s.current_version = tr.add_version(candidate, step=step, source="slow_update")
    return True
