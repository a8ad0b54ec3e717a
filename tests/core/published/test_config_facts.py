"""The base config's method defaults against the published SearchQA/benchmark configs'
(not in the 0.2.0 wheel, so a table of their facts: 4 epochs, batch 40, minibatch 8,
merge batch 8, edit budget cosine 4 -> 2, slow update on 20 samples, strict hard gate),
and the one default the wheel itself carries, merge_patches' batch size."""

from __future__ import annotations

from pathlib import Path

from core.config import load_config

BASE = Path(__file__).resolve().parents[3] / "configs" / "_base_" / "default.yaml"

PUBLISHED = {
    "epochs": 4,
    "batch_size": 40,
    "minibatch_size": 8,
    "merge_batch_size": 8,
    "schedule": ("cosine", 4, 2),
    "slow_update_samples": 20,
    "gate_metric": "hard",
}


def ours() -> dict:
    train = load_config(BASE).train
    return {
        "epochs": train.epochs,
        "batch_size": train.batch_size,
        "minibatch_size": train.minibatch_size,
        "merge_batch_size": train.merge_batch_size,
        "schedule": (train.schedule.kind, train.schedule.start, train.schedule.end),
        "slow_update_samples": train.slow_update.sample_size,
        "gate_metric": train.gate.metric,
    }


def test_base_config_has_the_published_method_defaults():
    """Fails on the old code: epochs 2 and merge batch 4."""
    assert ours() == PUBLISHED


def test_merge_batch_matches_the_wheels_own_default(published_oracle):
    theirs = published_oracle("defaults")["merge_batch_size"]
    assert load_config(BASE).train.merge_batch_size == theirs == 8
