"""The optimizer's side of the loop, as a protocol: given scored rollouts, propose edits.

Two strategies implement it: `llm` (an optimizer model reflecting on trajectories,
core.optimizer.llm) and `fewshot` (a deterministic, non-LLM strategy for the embedded
demonstration model, core.optimizer.fewshot). The trainer applies, validates and gates whatever
they return in exactly the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from core.environment.contract import RolloutResult
from core.run.events import Event
from core.skill.edits import ApplyReport, Edit


@dataclass
class ProposalContext:
    step: int  # global step index, 0-based
    epoch: int  # 0-based
    seed: int  # the step's seed (run seed + step): shuffles must use it
    skill_text: str
    results: list[RolloutResult]  # this step's train rollouts
    budget: int  # edits this step may apply (schedule); 0 = no edits
    edit_budget: int  # most edits one analyst call may propose
    minibatch_size: int
    merge_batch_size: int
    rejected_buffer: str  # rendered rejected-edit buffer of this epoch ("" if empty)
    meta_notes: str  # optimizer-side notes from the previous epoch ("" if none)
    last_apply_report: ApplyReport | None  # previous step's outcomes (unmatched edits)
    emit: Callable[[Event], None]  # for ReflectionText events as text arrives
    # "fixed": apply up to `budget` (the schedule); "autonomous": the strategy decides how
    # many of its merged edits to apply, `budget` is then only the largest pool size.
    lr_control: str = "fixed"
    # "selected" (published): apply only the edits the ranker chose; "padded": fill the
    # budget in the ranker's order (train.optimizer.ranking).
    ranking: str = "selected"
    # Published: a rollout with a model error is a failure for the analysts; False: left
    # out (train.optimizer.model_errors_fail).
    model_errors_fail: bool = True
    # The environment's own guide for each analyst kind ("failure", "success"), if any.
    analyst_guides: dict[str, str] = field(default_factory=dict)
    # Gradient accumulation (train.accumulation > 1): `results` by batch; analyst groups
    # are formed within each batch. None: one batch, `results`.
    batches: list[list[RolloutResult]] | None = None
    # train.candidates_per_step N > 1 (with gate.screen): which of the step's N proposals
    # this is (0 = the first, recorded in proposal.json); `seed` differs for each.
    candidate_index: int = 0


@dataclass
class Proposal:
    edits: list[Edit]  # ranked and clipped to ctx.budget, in application order
    merged: list[Edit] = field(default_factory=list)  # before ranking/clipping
    reflections: list[dict] = field(default_factory=list)  # {"kind", "group", "text"}
    lr: dict | None = None  # the autonomous learning-rate decision (None: the schedule's)
    # update_mode rewrite / full_rewrite: the whole candidate text (edits stay empty) and
    # what it was made from (the selected suggestions, or the full rewrite's summary).
    candidate: str | None = None
    suggestions: list[dict] = field(default_factory=list)
    # skill_aware: the new content of the protected execution-notes block (None = as is).
    execution_notes: str | None = None


@dataclass
class EpochPair:
    item_id: str
    before: RolloutResult  # previous epoch's skill
    after: RolloutResult  # current skill
    # "improved" | "regressed" | "still_failing" | "still_passing"
    outcome: str


@dataclass
class EpochContext:
    epoch: int  # the epoch that just ended, 0-based
    seed: int
    previous_skill: str
    current_skill: str
    pairs: list[EpochPair]
    current_guidance: str  # text of the protected slow-update block ("" if none)
    meta_notes: str
    emit: Callable[[Event], None]
    step: int = -1  # the step the epoch's events belong to (its last step); -1 = unknown
    # The candidates the gate rejected this epoch, with their edits (rendered rejected-edit
    # buffer, rejections only; "" if none): the meta notes are told what did not help.
    rejected: str = ""
    # The skill the next epoch starts from, when the slow update just changed it ("": the
    # current skill). The pairs were rolled out with current_skill, so it stays as it is.
    next_skill: str = ""


class OptimizerStrategy(Protocol):
    name: str

    async def propose(self, ctx: ProposalContext) -> Proposal: ...

    async def slow_update(self, ctx: EpochContext) -> str | None:
        """New guidance for the protected slow-update block, or None for no change."""
        ...

    async def meta_notes(self, ctx: EpochContext) -> str:
        """Notes for the optimizer itself, shown in next epoch's prompts only."""
        ...

    async def merge_skills(self, first: str, second: str) -> str:
        """train.pareto's merge of two frontier skills into one candidate (`first` back
        unchanged: nothing to merge). A strategy without it runs only with
        train.pareto.merges 0 (refused at setup)."""
        ...
