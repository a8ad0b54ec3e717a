"""The epoch end as published (issue 22 items 5, 9 and 10), on the hand-checkable scenario
(tests/support/train_scenario.py, the skill-sensitive TEST DOUBLE as target): what the
slow update and the meta notes are shown, the longitudinal pair policy, and gradient
accumulation. Small strategy TEST DOUBLES record what the loop passed them."""

from __future__ import annotations

import json

import pytest

from core.models.types import BudgetExceeded
from core.optimizer.fewshot import FewshotStrategy
from core.optimizer.strategy import Proposal
from core.run.events import EpochFinished, RunFinished
from core.skill.edits import Edit
from tests.core.training.test_method_fidelity import run
from tests.support.train_scenario import TRAIN


class EpochRecorder:
    """TEST DOUBLE: fewshot's edits (or fixed ones per step), a fixed guidance, and a
    record of every proposal and epoch context the loop passed in."""

    name = "epoch-recorder"

    def __init__(self, guidance=None, edits_by_step=None):
        self.inner = FewshotStrategy()
        self.guidance = guidance
        self.edits_by_step = edits_by_step or {}
        self.proposals, self.slow, self.meta = [], [], []

    async def propose(self, ctx):
        self.proposals.append(ctx)
        if ctx.step in self.edits_by_step:
            edits = list(self.edits_by_step[ctx.step])
            return Proposal(edits=edits, merged=edits)
        return await self.inner.propose(ctx)

    async def slow_update(self, ctx):
        self.slow.append(ctx)
        return self.guidance

    async def meta_notes(self, ctx):
        self.meta.append(ctx)
        return await self.inner.meta_notes(ctx)


async def test_meta_notes_see_the_accepted_slow_update_and_the_rejected_candidates(tmp_path):
    """Issue 22 item 9. Step 1's candidate (a rule teaching nothing) is rejected; the slow
    update ("- Norway: Oslo") is accepted. The meta notes must be shown the skill the next
    epoch starts from, with that guidance, and the rejected candidate's edits. Fails on
    the old code: it showed the skill before the slow update and no rejections."""
    useless = Edit("append", "", "Mind the spelling of Ruritania.")
    strategy = EpochRecorder(guidance="- Norway: Oslo", edits_by_step={1: [useless]})
    summary, _ = await run(tmp_path, strategy)
    assert summary.status == "finished"
    [meta] = strategy.meta  # only before a next epoch
    assert "- Norway: Oslo" in meta.next_skill and "- Norway: Oslo" not in meta.current_skill
    assert "Step 1: rejected" in meta.rejected and "Ruritania" in meta.rejected
    assert "failure patterns" not in meta.rejected.lower()


async def test_slow_update_runs_after_the_last_epoch_and_sees_every_pair(tmp_path):
    """Issue 22 item 5: at the end of both epochs, with all 6 sampled pairs, the previous
    and the current skill, and the pairs' trajectories. The old loop ran it once."""
    strategy = EpochRecorder()
    await run(tmp_path, strategy)
    assert [c.epoch for c in strategy.slow] == [0, 1]
    assert all(len(c.pairs) == 6 for c in strategy.slow)
    assert all(p.after.trajectory for c in strategy.slow for p in c.pairs)
    # The meta notes only feed the next epoch's prompts: none after the last one.
    assert [c.epoch for c in strategy.meta] == [0]


async def test_published_epoch_ends_skip_the_first_and_meta_first_acts_in_epoch_three(
    tmp_path,
):
    """Issue 38: as published, the first epoch's end makes no slow update and no meta
    notes call; the second's makes both (meta notes only before a next epoch), so the notes
    first reach the analysts in the third epoch. Fails on the old code (both after epoch 1)."""
    strategy = EpochRecorder(guidance="- Norway: Oslo")
    summary, _ = await run(tmp_path, strategy, epochs=3, slow_update={"after_first_epoch": False})
    assert summary.status == "finished"
    assert [c.epoch for c in strategy.slow] == [1, 2]
    assert [c.epoch for c in strategy.meta] == [1]
    assert not (tmp_path / "run" / "steps" / "0001" / "slow_update_pairs.json").exists()
    noted = [c.epoch for c in strategy.proposals if c.meta_notes]
    assert noted and min(noted) == 2


async def test_changed_pair_policy_keeps_changed_pairs_and_tops_them_up(tmp_path):
    """Published longitudinal_pair_policy. With a sample of 2, `mixed` keeps both pairs;
    `changed` keeps only improved/regressed ones and rolls out more train items until it
    has 2 (step 0 teaches t01-t03, so 3 of the 6 items improve in epoch 1)."""
    mixed = EpochRecorder()
    await run(tmp_path / "m", mixed, slow_update={"sample_size": 2})
    changed = EpochRecorder()
    await run(
        tmp_path / "c",
        changed,
        slow_update={"sample_size": 2, "longitudinal_pair_policy": "changed"},
    )
    first = changed.slow[0]
    assert len(first.pairs) == 2
    assert {p.outcome for p in first.pairs} <= {"improved", "regressed"}
    assert len(mixed.slow[0].pairs) == 2
    written = json.loads(
        (tmp_path / "c" / "run" / "steps" / "0001" / "slow_update_pairs.json").read_text()
    )
    assert sum(1 for p in written if p["shown"]) == 2
    assert len(written) >= 2  # the sample, then the top-up
    unchanged = EpochRecorder()
    await run(
        tmp_path / "u",
        unchanged,
        slow_update={"sample_size": 6, "longitudinal_pair_policy": "unchanged"},
    )
    assert {p.outcome for p in unchanged.slow[0].pairs} <= {"still_failing", "still_passing"}


async def test_accumulation_analyses_several_batches_in_one_step(tmp_path):
    """Published gradient accumulation: with batch 3 and accumulation 2, an epoch of the
    6 train items is one step that rolls out both batches and proposes once from all 6,
    each batch its own group list."""
    strategy = EpochRecorder()
    summary, _ = await run(
        tmp_path, strategy, steps_per_epoch=None, accumulation=2, slow_update={"enabled": False}
    )
    assert summary.total_steps == 2  # 2 epochs x ceil(6 / (3 x 2))
    first = strategy.proposals[0]
    assert sorted(r.item_id for r in first.results) == sorted(t[0] for t in TRAIN)
    assert [[r.item_id for r in b] for b in first.batches] == [
        ["t01", "t02", "t03"],
        ["t04", "t05", "t06"],
    ]
    rollouts = tmp_path / "run" / "steps" / "0000" / "rollouts.jsonl"
    assert len(rollouts.read_text().splitlines()) == 6


class StopsInMetaOnce(EpochRecorder):
    """TEST DOUBLE: the first meta-notes call hits the budget cap (as a handoff wait or a
    cap would stop the run there), the next one answers."""

    def __init__(self, guidance):
        super().__init__(guidance=guidance)
        self.stopped = False

    async def meta_notes(self, ctx):
        if not self.stopped:
            self.stopped = True
            raise BudgetExceeded("token budget reached (test double)")
        return await super().meta_notes(ctx)


async def test_a_stop_in_the_meta_call_keeps_the_accepted_slow_update(tmp_path):
    """Issue 22 (strong-model run): after an accepted slow update, a stop in the meta call
    fell back to the boundary before the epoch end, so the run printed the old best val.
    The slow update is a boundary of its own: the stopped run reports its best (0.8), and
    the resumed run neither redoes nor duplicates it. Fails on the old code (0.6)."""
    strategy = StopsInMetaOnce(guidance="- Norway: Oslo")
    gated = {"sample_size": 6, "gated": True}  # gated: it becomes best when it beats it
    summary, events = await run(tmp_path, strategy, slow_update=gated)
    assert summary.status == "stopped"
    [stopped] = [e for e in events if isinstance(e, RunFinished)]
    assert stopped.best_val == pytest.approx(0.8)
    summary, events = await run(tmp_path, strategy, slow_update=gated)
    assert summary.status == "finished" and summary.best_val == pytest.approx(0.8)
    assert [c.epoch for c in strategy.slow] == [0, 1]  # epoch 0's was not asked twice
    assert summary.accepted_slow_updates == [1]
    epochs = [e.slow_update_accepted for e in events if isinstance(e, EpochFinished)]
    assert epochs == [True, None]


async def test_fewshot_rolls_out_no_pairs_after_the_last_epoch(tmp_path):
    """Fewshot never writes guidance: after the last epoch (no meta notes either) its
    epoch end rolls out nothing; between epochs the meta notes still get their pairs."""
    await run(tmp_path, FewshotStrategy())
    steps = tmp_path / "run" / "steps"
    assert (steps / "0001" / "slow_update_pairs.json").exists()
    assert not (steps / "0003" / "slow_update_pairs.json").exists()
