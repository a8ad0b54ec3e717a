"""Recorded runs for the researcher's-bench tests: the hand-checkable scenario of
tests/support/train_scenario.py (the skill-sensitive TEST DOUBLE as target) trained in
process, in the shapes the tests compare.

Expected outcomes (from the double's documented behaviour, see train_scenario.py):
- "full" (budget 4, 2 epochs × 2 steps): best val v03 v04 v05 right (0.6); test x02 x03.
- "one_edit" (budget 1, one step on t01): only the format rule: val v03 v04 (0.4); test x03.
- "no_edit" (budget 0, one step): the initial skill stays best: val 0/5, test 0/3.
- "significance" ("full" with train.gate.significance at alpha 0.1): step 0's candidate
  (v03 v04 v05 up, nothing down: one-sided p 1/8) is not significant, so it is rejected.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.research.card import build_card, write_card
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.training.trainer import run_training
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config

SHAPES: dict[str, dict[str, Any]] = {
    "full": {},
    "one_edit": {
        "schedule": {"kind": "constant", "start": 1, "end": 1},
        "epochs": 1,
        "steps_per_epoch": 1,
        "batch_size": 1,
    },
    "significance": {"gate": {"significance": "sign", "alpha": 0.1}},
    "no_edit": {
        "schedule": {"kind": "constant", "start": 0, "end": 0},
        "epochs": 1,
        "steps_per_epoch": 1,
        "batch_size": 1,
    },
}


def record_run(root: Path, shape: str, name: str | None = None, seed: int = 0) -> Path:
    """Train the scenario in `shape` into root/runs/<name> and write its card."""
    tree = scenario_config(root, **SHAPES[shape])
    tree["run"]["seed"] = seed
    config = config_from_dict(tree)
    env = get_environment(config.env)
    out = root / "runs" / (name or shape)

    async def train() -> None:
        client = build_model_client(
            config,
            scripted={"target": SkillSensitiveTarget()},
            cache_path=root / f"{out.name}.sqlite",
        )
        try:
            await run_training(
                config,
                env=env,
                run_dir=RunDirectory(out),
                bus=EventBus(),
                client=client,
                initial_skill=INITIAL_SKILL,
            )
        finally:
            await client.aclose()

    # In a thread of its own: a caller may already run an event loop (Playwright's sync API).
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, train()).result()
    splits = {split: env.load_split(split) for split in ("train", "val", "test")}
    write_card(out, build_card(out, splits))
    return out
