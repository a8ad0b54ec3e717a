"""Optimizer replies are keyed by the run seed (issue 22 item 10): published has no reply
cache, so every run samples its own optimizer replies; ours caches them, and replicate
runs with other seeds must not replay one another's from the shared cache. On the
scenario with the llm strategy; the optimizer is a real loopback OpenAI server answering
with the ScriptedAnalyst TEST DOUBLE (a scripted backend is never cached)."""

from __future__ import annotations

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.training.trainer import run_training
from envs import get_environment
from tests.core.models.helpers import ENV, TEST_KEY_VAR
from tests.core.optimizer.test_llm import ScriptedAnalyst
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.loopback_openai import LoopbackOpenAI, Reply
from tests.support.train_scenario import INITIAL_SKILL, scenario_config


async def optimizer_calls_sent(tmp_path, server, seed: int, out: str) -> tuple[int, int]:
    """(optimizer calls that reached the server, optimizer calls of the run), one cache."""
    analyst = ScriptedAnalyst()
    server.handler = lambda r: Reply(analyst(r))
    tree = scenario_config(tmp_path, strategy="llm", minibatch_size=1, epochs=1)
    tree["run"]["seed"] = seed
    tree["models"]["optimizer"] = {
        "backend": "openai",
        "base_url": server.base_url,  # the endpoint is part of the key: one server
        "model": "loopback-optimizer",
        "api_key_env": TEST_KEY_VAR,
    }
    return await _train(tmp_path, config_from_dict(tree), out, analyst)


async def _train(tmp_path, config, out, analyst) -> tuple[int, int]:
    client = build_model_client(
        config,
        scripted={"target": SkillSensitiveTarget()},
        cache_path=tmp_path / "responses.sqlite",
        environ=ENV,
    )
    try:
        summary = await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / out),
            bus=EventBus(),
            client=client,
            initial_skill=INITIAL_SKILL,
        )
    finally:
        await client.aclose()
    assert summary.status == "finished"
    optimizer = summary.usage["per_role"]["optimizer"]
    return len(analyst.kinds), optimizer["calls"] + optimizer["cache_hits"]


async def test_another_seed_samples_its_own_optimizer_replies(tmp_path):
    # One item per analyst group: step 0's three failure prompts are the same whatever
    # the seed, so without the seed in the key the seed-1 run would replay seed 0's.
    with LoopbackOpenAI() as server:
        sent, total = await optimizer_calls_sent(tmp_path, server, 0, "seed0")
        assert sent == total > 0
        again, _ = await optimizer_calls_sent(tmp_path, server, 0, "seed0-again")
        assert again == 0  # the same seed replays every reply: resumes cost nothing
        other, other_total = await optimizer_calls_sent(tmp_path, server, 1, "seed1")
        assert other == other_total > 0
