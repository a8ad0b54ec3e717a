"""Scoring one skill on one split: the engine side of `skillopt eval`.

Goes through the same rollout runner as training (an in-memory rollout cache, the
response cache underneath), so an eval never disagrees with the scores a run reports.
"""

from __future__ import annotations

from core.config import Config
from core.environment.contract import SPLITS, EnvError, Environment, bind_target
from core.models.factory import build_model_client
from core.run.events import EventBus
from core.run.summary import EvalResult
from core.skill.document import skill_hash
from core.training.executor import open_executor
from core.training.rollout_cache import RolloutCache
from core.training.rollout_runner import RolloutRunner
from core.training.split_limit import limited_split


async def evaluate_skill(
    config: Config,
    skill_text: str,
    split: str,
    *,
    env: Environment,
    client=None,
    bus: EventBus | None = None,
) -> EvalResult:
    """Score one skill on one split (val/test limits from the config apply, the same
    seeded sample as training: core/training/split_limit.py)."""
    if split not in SPLITS:
        raise EnvError(f"unknown split {split!r}; allowed: {', '.join(SPLITS)}")
    own_client = client is None
    if client is None:
        client = build_model_client(config)
    executor = None
    try:
        executor = open_executor(config, env, ledger=client.ledger)
        items = env.load_split(split)
        limit = {"val": config.train.val_limit, "test": config.train.test_limit}.get(split)
        items = limited_split(items, limit, seed=config.run.seed, split=split)
        cache = RolloutCache(
            None, target_key=client.settings_key("target"), env_key=f"{env.name}:{env.version}"
        )
        runner = RolloutRunner(
            env,
            bind_target(env, client),
            cache,
            bus.emit if bus else (lambda _e: None),
            concurrency=client.runtime("target").concurrency,
            executor=executor,
        )
        results = await runner.run(items, skill_text, split=split, phase="eval", step=-1)
        cache.close()
        result = EvalResult.from_results(split, results, skill_hash(skill_text))
        return result
    finally:
        if executor is not None:
            executor.close()
        if own_client:
            await client.aclose()
