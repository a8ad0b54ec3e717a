"""configs/features/*.yaml: each overlay loads on top of the defaults and switches exactly
the variant it names (issue 15); a typo in a variant value stays an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import ConfigError, load_config

FEATURES = Path(__file__).resolve().parents[2] / "configs" / "features"


def _skill_only(env: str):
    """The overlay that keeps our framing of `env`: the skill alone, our seed skill."""
    return lambda c: (
        c.env.options.get("harness") == "skill_only"
        and c.train.initial_skill == f"envs/{env}/initial.md"
    )


EXPECTED = {
    "autonomous_lr": lambda c: (
        c.train.optimizer.lr_control == "autonomous" and c.train.strategy == "llm"
    ),
    "no_gate": lambda c: c.train.gate.enabled is False,
    "no_buffer": lambda c: c.train.optimizer.rejected_buffer is False,
    "no_slow_update": lambda c: c.train.slow_update.enabled is False,
    "no_meta": lambda c: c.train.meta_skill.enabled is False,
    "failures_only": lambda c: c.train.optimizer.failures_only is True,
    "full_trajectory": lambda c: c.train.optimizer.trajectory_chars is None,
    "clipped_items": lambda c: c.train.optimizer.trajectory_chars == 2000,
    "merge_edits_only": lambda c: c.train.optimizer.merge_context == "edits",
    "sampled_pairs": lambda c: c.train.slow_update.pairs_per_outcome == 4,
    "capped_merges": lambda c: c.train.optimizer.merges == "capped",
    "gated_slow_update": lambda c: c.train.slow_update.gated is True,
    "rewrite": lambda c: c.train.optimizer.update_mode == "rewrite" and c.train.strategy == "llm",
    "full_rewrite": lambda c: (
        c.train.optimizer.update_mode == "full_rewrite" and c.train.strategy == "llm"
    ),
    "skill_aware": lambda c: c.train.optimizer.skill_aware is True,
    "gated_notes": lambda c: c.train.optimizer.notes_gated is True,
    "density_gate": lambda c: (
        c.train.gate.density_weight == 0.2 and c.train.gate.density_formula == "ours"
    ),
    "published_density": lambda c: (
        c.train.gate.density_weight == 0.05 and c.train.gate.density_formula == "published"
    ),
    "repeated_gate": lambda c: c.train.gate.repeats == 3,
    "pareto": lambda c: c.train.pareto.enabled is True and c.train.pareto.size == 8,
    "screen": lambda c: c.train.gate.screen is True and c.train.candidates_per_step == 3,
    "significance_gate": lambda c: (
        c.train.gate.significance == "sign" and c.train.gate.alpha == 0.1
    ),
    "soft_gate": lambda c: c.train.gate.metric == "soft",
    "mixed_gate": lambda c: c.train.gate.metric == "mixed",
    "strict_edit_targets": lambda c: c.train.optimizer.edit_targets == "strict",
    "padded_ranking": lambda c: c.train.optimizer.ranking == "padded",
    "early_epoch_review": lambda c: c.train.slow_update.after_first_epoch is True,
    "bounded_buffer": lambda c: c.train.optimizer.rejected_buffer_chars == 4000,
    "prevalidate": lambda c: c.train.prevalidate is True,
    "retry_truncated": lambda c: c.train.optimizer.retry_truncated is True,
    "newline_stop": lambda c: c.models.target.stop == ["\n"],
    "deduped_merges": lambda c: c.train.optimizer.dedupe_before_merge is True,
    "structured_optimizer": lambda c: c.models.optimizer.structured == "auto",
    "skip_model_errors": lambda c: c.train.optimizer.model_errors_fail is False,
    "searchqa_skill_only": _skill_only("searchqa"),
    "docvqa_skill_only": _skill_only("docvqa"),
    "livemath_skill_only": _skill_only("livemath"),
    "officeqa_skill_only": _skill_only("officeqa"),
    "spreadsheetbench_skill_only": _skill_only("spreadsheetbench"),
    "alfworld_skill_only": _skill_only("alfworld"),
    "reasoning_optimizer": lambda c: (
        c.models.optimizer.temperature is None and c.models.optimizer.reasoning_effort == "medium"
    ),
}


def test_every_overlay_is_covered():
    assert sorted(p.stem for p in FEATURES.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_overlay_switches_its_variant(tmp_path, name):
    config = tmp_path / "run.yaml"
    config.write_text(
        f"_base_: [{FEATURES.parent / '_base_' / 'default.yaml'}, {FEATURES / name}.yaml]\n"
    )
    loaded = load_config(config)
    assert EXPECTED[name](loaded)
    default = load_config(FEATURES.parent / "_base_" / "default.yaml")
    assert not EXPECTED[name](default)


@pytest.mark.parametrize(
    "override",
    [
        "train.optimizer.lr_control=adaptive",
        "train.optimizer.merge_context=everything",
        "models.optimizer.reasoning_effort=max",
        "train.optimizer.update_mode=patches",
        "train.gate.density_weight=1",  # < 1: the item scores must keep some weight
        "train.gate.repeats=0",
        "train.gate.significance=ttest",
        "train.gate.alpha=0",
        "train.gate.alpha=1.5",
        "train.gate.min_delta=-0.1",
        "train.gate.rescore=-1",
        "train.gate.alfa=0.1",  # unknown keys are errors
        "train.pareto.size=1",
        "train.pareto.frontier=4",
    ],
)
def test_unknown_variant_values_are_errors(override):
    with pytest.raises(ConfigError):
        load_config(None, [override])


def test_trajectory_chars_below_200_is_a_config_error(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("train:\n  optimizer:\n    trajectory_chars: 50\n")
    with pytest.raises(ConfigError, match="trajectory_chars"):
        load_config(path)


@pytest.mark.parametrize(
    "config", ["demo.yaml", "bigbench/default.yaml", "reasoning_gym/default.yaml"]
)
def test_the_one_line_qa_configs_keep_the_newline_stop(config):
    """Their targets answer in one line on the embedded model: `newline_stop` keeps their
    requests (and the demo's figures) as they were when the embedded backend stopped every
    call at a newline."""
    assert load_config(FEATURES.parent / config).models.target.stop == ["\n"]
