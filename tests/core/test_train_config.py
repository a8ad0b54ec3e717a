"""The `train:` section (core.train_config): the update-mode / learning-rate pairs, and the
names core.config re-exports for the code that imports them from there."""

from pathlib import Path

import pytest

import core.config
import core.train_config
from core.config import ConfigError, load_config

REPO = Path(__file__).resolve().parents[2]
FEATURES = REPO / "configs" / "features"
REFUSAL = (
    "train.optimizer.update_mode: full_rewrite has no ranked pool for lr_control autonomous "
    "to size; use update_mode rewrite (or patch) with it, or set lr_control fixed"
)


def test_full_rewrite_with_autonomous_lr_names_the_file_and_what_to_do(tmp_path):
    combo = tmp_path / "combo.yaml"
    overlays = ", ".join(str(FEATURES / f) for f in ("autonomous_lr.yaml", "full_rewrite.yaml"))
    combo.write_text(f"_base_: [{overlays}]\n")
    with pytest.raises(ConfigError) as caught:
        load_config(combo)
    assert str(caught.value) == f"{FEATURES / 'full_rewrite.yaml'}: {REFUSAL}"


@pytest.mark.parametrize(
    "order",
    [
        ("lr_control=autonomous", "update_mode=full_rewrite"),
        ("update_mode=full_rewrite", "lr_control=autonomous"),
    ],
)
def test_the_refusal_does_not_depend_on_the_order_of_the_settings(order):
    with pytest.raises(ConfigError) as caught:
        load_config(None, [f"train.optimizer.{o}" for o in order])
    assert str(caught.value) == f"--set {REFUSAL}"


@pytest.mark.parametrize(
    ("mode", "control"),
    [("rewrite", "autonomous"), ("full_rewrite", "fixed"), ("patch", "autonomous")],
)
def test_every_other_pair_loads(mode, control):
    cfg = load_config(
        None, [f"train.optimizer.update_mode={mode}", f"train.optimizer.lr_control={control}"]
    )
    assert (cfg.train.optimizer.update_mode, cfg.train.optimizer.lr_control) == (mode, control)


def test_core_config_reexports_the_section_models():
    for name in (
        "TrainConfig",
        "ScheduleConfig",
        "GateConfig",
        "OptimizerMethodConfig",
        "SlowUpdateConfig",
        "MetaSkillConfig",
    ):
        assert getattr(core.config, name) is getattr(core.train_config, name)
