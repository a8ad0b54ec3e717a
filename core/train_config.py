"""The `train:` section of the run configuration: the loop's sizes, the schedule (the
textual learning rate), the gate, and the optimizer's variants and ablations.

Kept apart from core.config (which loads files and holds the other sections) because it
is the part the published method's variants change; core.config re-exports every name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from core.strict_model import StrictModel


class ScheduleConfig(StrictModel):
    """The textual learning rate: how many edits a step may apply."""

    kind: Literal["constant", "linear", "cosine"] = "cosine"
    start: int = Field(default=4, ge=0)
    end: int = Field(default=2, ge=0)


class GateConfig(StrictModel):
    # false = the no-gate ablation: every valid candidate is accepted (marked as such in
    # gate.json and the staged evidence).
    enabled: bool = True
    metric: Literal["hard", "soft", "mixed"] = "hard"
    soft_weight: float = Field(default=0.5, ge=0, le=1)  # weight of soft in "mixed"
    early_decide: bool = True
    # The density term, off at 0 (the published default). density_formula "published":
    # + w x the share of the 11 leading words (MUST, ALWAYS, NEVER, ...; published w 0.05);
    # "ours" (configs/features/density_gate.yaml): (1 - w) x mean + w x the share of words
    # in imperative sentences. Protected blocks are excluded either way.
    density_weight: float = Field(default=0.0, ge=0, lt=1)
    density_formula: Literal["published", "ours"] = "published"
    repeats: int = Field(default=1, ge=1)  # each val item scored N times (mean): noisy targets
    # true: once the best scores 1 on every val item (no density term), a strict gate can
    # accept nothing more, so the remaining steps are skipped (Sleep's nights: on handoff
    # each step is a person's work). false (published): the steps run anyway.
    skip_when_perfect: bool = False


class OptimizerMethodConfig(StrictModel):
    """Variants and ablations of the published optimizer (configs/features/*.yaml)."""

    # fixed = the schedule's budget; autonomous = one call per step picks how many of the
    # ranked pool to apply (within [0, pool]): merged edits (patch) or suggestions (rewrite).
    lr_control: Literal["fixed", "autonomous"] = "fixed"
    rejected_buffer: bool = True  # false = the buffer ablation (analysts never see it)
    failures_only: bool = False  # true = no success analysts
    # auto (published): whole items, clipped only where a group would not fit the
    # optimizer's context window (context_tokens); N: each item clipped to ~N characters
    # (configs/features/clipped_items.yaml); null: whole items, no limit at all.
    trajectory_chars: int | Literal["auto"] | None = "auto"
    context_tokens: int = Field(default=128_000, ge=1024)  # the optimizer model's window
    # analyses (published): each merge sees the analysts' analyses and failure counts behind
    # the lists too; edits (configs/features/merge_edits_only.yaml): the edit lists only
    merge_context: Literal["edits", "analyses"] = "analyses"
    # trees: failure and success trees, then one final merge, uncapped (published);
    # capped: one shared tree, each merge capped at the budget (core.optimizer.merge_tree)
    merges: Literal["trees", "capped"] = "trees"
    max_completion_tokens: int = Field(default=32_768, ge=1)  # ceiling of sized budgets
    # patch = edits; rewrite = typed suggestions, then one call rewrites the skill;
    # full_rewrite = each group writes a whole candidate, the merge picks or combines.
    update_mode: Literal["patch", "rewrite", "full_rewrite"] = "patch"
    skill_aware: bool = False  # failure analysts tell skill defects from lapses (→ notes)
    notes_max_chars: int = Field(default=1500, ge=100)  # execution notes: consolidate past it
    # false (published): the notes are written into the current skill after the step's
    # gate; true (configs/features/gated_notes.yaml): they are part of the gated candidate
    notes_gated: bool = False

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
    sample_size: int = Field(default=20, ge=1)
    # false (published): the guidance goes into the current skill only, no val pass (the
    # finish gates the final skill); true (configs/features/gated_slow_update.yaml): it
    # must beat the best on val like any candidate.
    gated: bool = False
    # null (published): every pair is shown, whole, within the optimizer's context;
    # N (configs/features/sampled_pairs.yaml): a seeded sample of N per outcome.
    pairs_per_outcome: int | None = Field(default=None, ge=1)
    # Which pairs the prompts get (published optimizer.longitudinal_pair_policy): mixed =
    # all; changed = improved and regressed only, topped up towards sample_size from the
    # rest of the train split (seeded order); unchanged = still failing / still passing.
    longitudinal_pair_policy: Literal["mixed", "changed", "unchanged"] = "mixed"


class MetaSkillConfig(StrictModel):
    enabled: bool = True


class TrainConfig(StrictModel):
    initial_skill: str | None = None  # path; null = an empty skill
    epochs: int = Field(default=2, ge=1)
    steps_per_epoch: int | None = Field(default=None, ge=1)  # null = ceil(train / batch)
    batch_size: int = Field(default=40, ge=1)
    # Gradient accumulation (published train.accumulation): a step rolls out and analyses
    # this many batches, then merges all their edits into one candidate; an epoch has
    # ceil(train / (batch_size x accumulation)) steps.
    accumulation: int = Field(default=1, ge=1)
    minibatch_size: int = Field(default=8, ge=1)
    merge_batch_size: int = Field(default=4, ge=2)
    edit_budget: int = Field(default=4, ge=0)  # most edits one analyst call may propose
    schedule: ScheduleConfig = ScheduleConfig()
    strategy: Literal["auto", "llm", "fewshot"] = "auto"
    optimizer: OptimizerMethodConfig = OptimizerMethodConfig()
    gate: GateConfig = GateConfig()
    slow_update: SlowUpdateConfig = SlowUpdateConfig()
    meta_skill: MetaSkillConfig = MetaSkillConfig()
    max_skill_chars: int = Field(default=20_000, ge=100)
    val_limit: int | None = Field(default=None, ge=1)
    test_limit: int | None = Field(default=None, ge=1)
    final_test: bool = True
    shuffle: bool = True
