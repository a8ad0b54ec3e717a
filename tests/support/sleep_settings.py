"""sleep.yaml edited as a person would, for fixtures with few held-out tasks."""

from __future__ import annotations

from pathlib import Path

from sleep.state.settings import load_settings, save_settings


def lower_min_val_tasks(state_dir: Path, n: int = 1) -> None:
    """The gate's minimum of held-out tasks (default 6, sleep/night/held_out.py) lowered to `n`:
    a fixture of a few sessions has fewer, and its test is about something else
    (tests/sleep/test_held_out.py tests the minimum itself)."""
    settings = load_settings(state_dir)
    save_settings(state_dir, settings.model_copy(update={"min_val_tasks": n}))
