"""The `train:` section of the run configuration: the loop's sizes, the schedule (the
textual learning rate), the gate, and the optimizer's variants and ablations.

Kept apart from core.config (which loads files and holds the other sections) because it
is the part the published method's variants change; core.config re-exports every name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from core.strict_model import StrictModel


class ScheduleConfig(StrictModel):
    """The textual learning rate: how many edits a step may apply."""

    kind: Literal["constant", "linear", "cosine"] = "cosine"
    """How the edit count moves from `start` to `end` over the run's steps, by the published
    progress `(step + 1) / total_steps`, rounded."""
    start: int = Field(default=4, ge=0)
    """Edits the first step may apply (a one-step run gets this)."""
    end: int = Field(default=2, ge=0)
    """Edits the last step may apply."""


class GateConfig(StrictModel):
    """The validation gate: a candidate is kept only if it scores strictly better on val."""

    enabled: bool = True
    """false = the no-gate ablation: every valid candidate is accepted (marked as such in
    gate.json and the staged evidence)."""
    metric: Literal["hard", "soft", "mixed"] = "hard"
    """The score the gate compares: hard (right/wrong), soft (partial credit) or a mix."""
    soft_weight: float = Field(default=0.5, ge=0, le=1)
    """Weight of the soft score in `mixed`."""
    early_decide: bool = True
    """Stop scoring a candidate once the rest of the val items cannot change the decision."""
    # The density term, off at 0 (the published default). density_formula "published":
    # + w x the share of the 11 leading words (MUST, ALWAYS, NEVER, ...; published w 0.05);
    # "ours" (configs/features/density_gate.yaml): (1 - w) x mean + w x the share of words
    # in imperative sentences. Protected blocks are excluded either way.
    density_weight: float = Field(default=0.0, ge=0, lt=1)
    """Weight w of the rule-density term (0 = off, as published; the published value when on
    is 0.05)."""
    density_formula: Literal["published", "ours"] = "published"
    """published: mean + w x share of the 11 leading words (MUST, ALWAYS, NEVER, ...);
    ours: (1 - w) x mean + w x share of words in imperative rules."""
    repeats: int = Field(default=1, ge=1)
    """Each val item is scored this many times and the mean compared (noisy targets)."""
    significance: Literal["off", "sign"] = "off"
    """off (published): a higher mean is enough; sign (configs/features/significance_gate
    .yaml): the candidate must also beat the best on significantly more val items than it
    loses, by the exact one-sided paired sign test at `alpha` (on 0/1 items it is the exact
    McNemar test), and gain at least `min_delta` on the mean."""
    alpha: float = Field(default=0.1, gt=0, lt=1)
    """With significance sign: the largest p-value accepted."""
    min_delta: float = Field(default=0.0, ge=0, le=1)
    """With significance sign: the smallest mean gain over the best accepted."""
    rescore: int = Field(default=0, ge=0)
    """With significance sign: a candidate that passes is scored this many more times,
    and the best as many, on each item where they disagree (fresh samples), and the test
    is made again on each item's mean: a lucky rollout must repeat (0 = no re-scoring)."""
    screen: bool = False
    """false (published): every candidate gets the full val pass; true (configs/features
    /screen.yaml): it is first scored on the step's own train batch (already rolled out
    for the current skill) and gets the val pass only if it scores higher there."""
    skip_when_perfect: bool = False
    """true: once the best scores 1 on every val item (no density term), the remaining steps
    are skipped, since a strict gate can accept nothing more (Sleep's nights). false
    (published): the steps run anyway."""


class ParetoConfig(StrictModel):
    """Ours (configs/features/pareto.yaml): keep a frontier of non-dominated candidates
    over per-item val scores instead of one best alone (core/training/frontier.py)."""

    enabled: bool = False
    """false (published): each step starts from the current skill; true: from a frontier
    member drawn by the items it wins, and every candidate is scored on every val item."""
    size: int = Field(default=8, ge=2)
    """Most members kept; the one winning the fewest items leaves (never the best)."""
    merges: int = Field(default=2, ge=0)
    """Merge steps per run at most: two members winning on different items, combined by
    the optimizer into one candidate the gate judges (0 = none)."""


class OptimizerMethodConfig(StrictModel):
    """Variants and ablations of the published optimizer (configs/features/*.yaml)."""

    lr_control: Literal["fixed", "autonomous"] = "fixed"
    """fixed = the schedule's budget; autonomous = one call per step picks how many of the
    ranked pool to apply (within [0, pool]): merged edits (patch) or suggestions (rewrite)."""
    rejected_buffer: bool = True
    """Show analysts the edits the gate rejected before (false = the buffer ablation)."""
    failures_only: bool = False
    """true = no success analysts, only failure analysts."""
    trajectory_chars: int | Literal["auto"] | None = "auto"
    """auto (published): whole items, clipped only where a group would not fit
    `context_tokens`; N: each item clipped to about N characters; null: no limit at all."""
    context_tokens: int = Field(default=128_000, ge=1024)
    """The optimizer model's context window (the embedded model's is its ctx_per_slot)."""
    merge_context: Literal["edits", "analyses"] = "analyses"
    """analyses (published): each merge sees the analyses and failure counts behind the edit
    lists too; edits: the edit lists only."""
    merges: Literal["trees", "capped"] = "trees"
    """trees (published): failure and success trees, then one final merge, uncapped; capped:
    one shared tree, each merge capped at the edit budget."""
    dedupe_before_merge: bool = False
    """false (published): every analyst list with edits enters the merge tree, duplicates
    included; true: each edit once (in the first list, with every proposer as support), a
    list left empty skips its merge."""
    max_completion_tokens: int = Field(default=32_768, ge=1)
    """Ceiling of the completion budget the llm strategy sizes for each optimizer call."""
    update_mode: Literal["patch", "rewrite", "full_rewrite"] = "patch"
    """patch = bounded edits; rewrite = typed suggestions, then one call rewrites the skill;
    full_rewrite = each analyst group writes a whole candidate, the merge picks or combines."""
    skill_aware: bool = False
    """Failure analysts tell skill defects (edits) from lapses in following a rule (notes in
    the protected execution-notes block)."""
    notes_max_chars: int = Field(default=1500, ge=100)
    """Execution notes longer than this are consolidated by one call (kept only if shorter)."""
    notes_gated: bool = False
    """false (published): notes are written into the current skill after the step's gate;
    true: they are part of the gated candidate."""
    rejected_buffer_chars: int | None = Field(default=None, ge=200)
    """null (published): the buffer is shown whole; N: within N characters, newest first,
    targets and contents clipped to 80 and 160 characters."""
    retry_truncated: bool = False
    """false (published: no second call): an optimizer reply cut at its token limit is
    dropped; true: it is asked again once at twice the budget, then dropped."""
    model_errors_fail: bool = True
    """true (published): a rollout that ended in a model error (scored 0) is a failure the
    analysts see; false: it is left out, as it says nothing about the skill."""
    edit_targets: Literal["first", "strict"] = "first"
    """first (published): an edit acts on its target's first exact occurrence, and an
    insert_after whose target is missing appends; strict: exact then whitespace-normalised,
    a target found twice is refused and a missing one dropped (core/skill/edits.py)."""
    ranking: Literal["selected", "padded"] = "selected"
    """selected (published): only the edits the ranker chose are applied, possibly fewer
    than the budget; padded: the ranker orders every edit and the budget is filled in that
    order, with the merged order for any it left out."""

    @field_validator("trajectory_chars")
    @classmethod
    def _check_trajectory_chars(cls, chars: int | str | None) -> int | str | None:
        if isinstance(chars, int) and chars < 200:
            raise ValueError("must be auto, null or at least 200 characters per item")
        return chars

    @field_validator("update_mode")
    @classmethod
    def _check_update_mode(cls, mode: str, info: ValidationInfo) -> str:
        """The autonomous learning rate sizes a ranked pool; full_rewrite ranks nothing
        (one merged candidate), so the pair has no published meaning: refuse it."""
        if mode == "full_rewrite" and info.data.get("lr_control") == "autonomous":
            raise ValueError(
                "full_rewrite has no ranked pool for lr_control autonomous to size; use "
                "update_mode rewrite (or patch) with it, or set lr_control fixed"
            )
        return mode


class SlowUpdateConfig(StrictModel):
    """The epoch-end slow update (and the evidence the meta notes share with it): at the
    end of every epoch, the last one included, the epoch's starting and last skills are
    rolled out on `sample_size` train items and paired per item."""

    enabled: bool = True
    """Run the slow update at every epoch's end (false = the no_slow_update ablation)."""
    sample_size: int = Field(default=20, ge=1)
    """Train items rolled out under both skills and paired."""
    gated: bool = False
    """false (published): the guidance goes into the current skill with no val pass (the
    finish gates the final skill); true: it must beat the best on val like any candidate."""
    pairs_per_outcome: int | None = Field(default=None, ge=1)
    """null (published): every pair is shown, whole, within the optimizer's context; N: a
    seeded sample of N pairs per outcome."""
    longitudinal_pair_policy: Literal["mixed", "changed", "unchanged"] = "mixed"
    """Which pairs the prompts get: mixed = all; changed = improved and regressed only,
    topped up towards sample_size; unchanged = still failing or still passing."""
    after_first_epoch: bool = False
    """false (published): the first epoch's end makes no slow update and no meta notes
    call (the notes first act in the third epoch); true: it reviews like the others."""


class MetaSkillConfig(StrictModel):
    """Meta notes written between epochs, read by the next epoch's analysts."""

    enabled: bool = True
    """Write meta notes at each epoch's end but the last (false = the no_meta ablation)."""


class TrainConfig(StrictModel):
    """The training loop: sizes, schedule, strategy, gate and epoch-end updates."""

    initial_skill: str | None = None
    """Path of the seed skill (`skillopt train --skill` from a skills repository wins);
    null = an empty skill."""
    epochs: int = Field(default=4, ge=1)
    """Passes over the train split (published: 4)."""
    steps_per_epoch: int | None = Field(default=None, ge=1)
    """Steps in one epoch; null = ceil(train items / (batch_size x accumulation))."""
    batch_size: int = Field(default=40, ge=1)
    """Train items rolled out per batch."""
    accumulation: int = Field(default=1, ge=1)
    """Gradient accumulation: batches rolled out and analysed per step, merged into one
    candidate."""
    minibatch_size: int = Field(default=8, ge=1)
    """Items one analyst call sees."""
    merge_batch_size: int = Field(default=8, ge=2)
    """Edit lists one merge call combines (published: 8)."""
    edit_budget: int = Field(default=4, ge=0)
    """Most edits one analyst call may propose."""
    candidates_per_step: int = Field(default=1, ge=1)
    """Candidates proposed per step from the same rollouts, each with its own seed; with
    gate.screen the best screened one is gated (1 = published)."""
    schedule: ScheduleConfig = ScheduleConfig()
    strategy: Literal["auto", "llm", "fewshot"] = "auto"
    """llm (reflect and edit), fewshot (deterministic, no optimizer calls), auto = fewshot on
    the embedded model, else llm."""
    optimizer: OptimizerMethodConfig = OptimizerMethodConfig()
    gate: GateConfig = GateConfig()
    slow_update: SlowUpdateConfig = SlowUpdateConfig()
    meta_skill: MetaSkillConfig = MetaSkillConfig()
    pareto: ParetoConfig = ParetoConfig()

    @model_validator(mode="after")
    def _check_screened_candidates(self) -> TrainConfig:
        """Several candidates a step need the screen to pick the one the val pass judges."""
        if self.candidates_per_step > 1 and not self.gate.screen:
            raise ValueError(
                "candidates_per_step above 1 needs gate.screen true (the screen picks the "
                "candidate to gate); add configs/features/screen.yaml or set it to 1"
            )
        return self

    prevalidate: bool = False
    """false (published): a candidate is scored unless its frontmatter or protected-block
    markers are broken; true: free checks first (size over max_skill_chars, optimizer
    chatter, an unclosed or wrapping code fence) reject it without a rollout."""
    max_skill_chars: int = Field(default=20_000, ge=100)
    """With prevalidate: a candidate longer than this is invalid and never gated."""
    val_limit: int | None = Field(default=None, ge=1)
    """Keep a seeded sample of this many val items (null = the whole split)."""
    test_limit: int | None = Field(default=None, ge=1)
    """Keep a seeded sample of this many test items (null = the whole split)."""
    final_test: bool = True
    """Score the initial, best and final skills on the test split at the end."""
    shuffle: bool = True
    """Shuffle the train split each epoch (seeded by run.seed)."""
