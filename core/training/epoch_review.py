"""End of an epoch (DESIGN §4): at each boundary between two epochs, slow update and
meta notes, so the next epoch (the second on) starts with them; after the last epoch
there is no next epoch to use them, so none are written.

Both read the same evidence: the epoch's starting skill and the current one rolled out on
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
from core.skill.document import SkillError
from core.skill.protected_blocks import SLOW_UPDATE_BLOCK, read_block, strip_markers, write_block
from core.training.candidate_gate import judge_candidate
from core.training.context import TrainingRun


def pair_outcome(before: RolloutResult, after: RolloutResult) -> str:
    if after.hard > before.hard:
        return "improved"
    if after.hard < before.hard:
        return "regressed"
    return "still_passing" if after.hard > 0 else "still_failing"


async def review_epoch(tr: TrainingRun, epoch: int) -> None:
    """Finish `epoch` (0-based): unless it is the last, run slow update and meta notes;
    then emit EpochFinished, start the next epoch from the current skill and persist."""
    s = tr.state
    cfg = tr.cfg
    accepted: bool | None = None
    notes = ""
    step_marker = s.next_step - 1  # the epoch's last step: where its events belong
    has_next = epoch + 1 < cfg.epochs
    if has_next and (cfg.slow_update.enabled or cfg.meta_skill.enabled):
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
        tr.rd.write_step_json(
            step_marker,
            "slow_update_pairs.json",
            [
                {
                    "item_id": p.item_id,
                    "outcome": p.outcome,
                    "before": {"hard": p.before.hard, "prediction": p.before.prediction},
                    "after": {"hard": p.after.hard, "prediction": p.after.prediction},
                }
                for p in pairs
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
    # Gated (default): like any candidate. Forced: it becomes current whatever it scores,
    # re-measured on val so the run knows where it stands (best only if strictly better).
    mode = "strict" if tr.cfg.slow_update.gated else "forced"
    if not tr.cfg.gate.enabled:
        mode = "disabled"
    info = await judge_candidate(
        tr, candidate, step=step, edits=[], source="slow_update", mode=mode
    )
    tr.rd.write_step_json(step, "slow_update_gate.json", info)
    return bool(info["accepted"])
