"""A resume must continue on the models the run started with. With `backend: auto` the
same config resolves to an API model when a key is in the environment and to the embedded
model without one; a resume in the other environment is refused before any model call.

The "API model" of the first attempt is the skill-sensitive TEST DOUBLE (a scripted role
is what `auto` resolved to there); the resume resolves `auto` for real, with no keys set:
the embedded model, which is never started because the resume stops first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.training.resume import ConfigChanged
from core.training.trainer import run_training
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config


def auto_config(tmp_path: Path, max_tokens: int):
    tree = scenario_config(tmp_path)
    tree["models"]["target"]["backend"] = "auto"
    tree["budget"] = {"max_tokens": max_tokens}
    return config_from_dict(tree)


async def attempt(tmp_path: Path, config, client):
    try:
        return await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / "run"),
            bus=EventBus(),
            client=client,
            initial_skill=INITIAL_SKILL,
        )
    finally:
        await client.aclose()


async def test_resume_refuses_a_target_that_auto_resolves_differently(tmp_path):
    cache = tmp_path / "responses.sqlite"
    config = auto_config(tmp_path, 300)
    target = SkillSensitiveTarget()
    stopped = await attempt(
        tmp_path, config, build_model_client(config, scripted={"target": target}, cache_path=cache)
    )
    assert stopped.status == "stopped"
    state_path = tmp_path / "run" / "state.json"
    state = json.loads(state_path.read_text())
    assert state["target_model"].startswith("scripted:") and state["strategy"] == "fewshot"
    before = state_path.read_bytes()

    elsewhere = build_model_client(config, environ={}, cache_path=cache)
    assert elsewhere.describe("target").startswith("local:")
    with pytest.raises(ConfigChanged) as refused:
        await attempt(tmp_path, config, elsewhere)
    message = str(refused.value)
    assert "\n" not in message
    assert "target model scripted:" in message and "resolves it to local:" in message
    assert "restore that environment" in message and "--fresh --force" in message
    assert state_path.read_bytes() == before  # nothing was run or recorded

    calls = target.calls
    config = auto_config(tmp_path, 10**6)
    resumed = await attempt(
        tmp_path, config, build_model_client(config, scripted={"target": target}, cache_path=cache)
    )
    assert resumed.status == "finished" and resumed.best_val == pytest.approx(0.6)
    assert target.calls > calls
