"""The default `min_val_tasks` (sleep/state/settings.py), from the sign test: a clean
sweep at the default is a chance of at most 1 in 8, one fewer is not."""

from __future__ import annotations

from core.sign_test import sign_test_p_greater
from sleep.state.settings import DEFAULT_MIN_VAL_TASKS


def test_the_default_is_the_fewest_held_out_items_a_clean_sweep_is_not_noise_on():
    """2 items both improved is the issue's "certifies noise" (a coin does it 1 time in
    4); 3 is the fewest a clean sweep of which happens by chance at most 1 time in 8."""
    assert sign_test_p_greater(DEFAULT_MIN_VAL_TASKS, 0) <= 1 / 8
    assert sign_test_p_greater(DEFAULT_MIN_VAL_TASKS - 1, 0) > 1 / 8


def test_a_night_keeps_the_optimizer_reply_schema_that_benchmark_training_drops():
    """Training sends the optimizer no schema, as published does; a night's analysts keep
    it where the backend honours it (sleep/night.yaml, sleep-night.md's defaults table)."""
    from core.config import load_config
    from sleep.night.run import night_defaults

    assert load_config(None).models.optimizer.structured == "off"
    assert load_config(night_defaults()).models.optimizer.structured == "auto"
