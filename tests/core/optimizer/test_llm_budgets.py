"""Completion budgets of the `llm` strategy (issue 15): sized from the prompt and the skill,
never below the role's max_tokens, never above the configured ceiling; a reply cut off at
the limit is never applied. Scripted TEST DOUBLE client as in test_llm.py."""

from __future__ import annotations

from core.optimizer.llm import LLMOptimizer, completion_budget
from tests.core.optimizer.test_llm import FakeOptimizer, ctx, one_edit_per_group, results


def test_budget_grows_with_prompt_and_skill_between_floor_and_ceiling():
    assert completion_budget(4_000, 1_000, floor=2048, ceiling=32_768) == 2048
    big = completion_budget(200_000, 60_000, floor=2048, ceiling=32_768)
    assert 2048 < big <= 32_768
    assert completion_budget(10**7, 10**7, floor=2048, ceiling=32_768) == 32_768
    assert completion_budget(10**7, 10**7, floor=4096, ceiling=1024) == 4096  # floor wins


async def test_a_long_skill_gets_a_larger_completion_budget_and_timeout():
    fake = FakeOptimizer(failure=one_edit_per_group)
    c = ctx(results(2, 0))
    c.skill_text = "# Skill\n\n" + "Answer with the city name only.\n" * 3000  # ~93k chars
    optimizer = LLMOptimizer(fake.client, max_tokens_floor=2048, timeout_floor_s=120.0)
    await optimizer.propose(c)
    [call] = [x for x in fake.calls if x["kind"] == "failure"]
    assert call["settings"]["max_tokens"] > 2048
    short = FakeOptimizer(failure=one_edit_per_group)
    await LLMOptimizer(short.client, max_tokens_floor=2048).propose(ctx(results(2, 0)))
    assert short.calls[0]["settings"]["max_tokens"] == 2048
