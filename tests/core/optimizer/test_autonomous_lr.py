"""The autonomous learning rate (issue 15): one call per step picks how many of the ranked
pool to apply, clamped to [0, pool]; unusable replies apply nothing. Scripted TEST DOUBLE
client (test_llm.py); the trainer-level record is checked in
tests/core/training/test_variants_loop.py."""

from __future__ import annotations

import pytest

from core.optimizer.llm import LLMOptimizer
from tests.core.optimizer.test_llm import FakeOptimizer, ctx, four_edits, results


def auto_ctx(**kw):
    c = ctx(results(2, 0), budget=4, **kw)
    c.lr_control = "autonomous"
    return c


@pytest.mark.parametrize(
    ("reply", "expected", "asked"),
    [
        ({"count": 2, "reasoning": "two are safe", "confidence": "high", "risks": "r"}, 2, 2),
        ({"count": 99, "reasoning": "all"}, 4, 99),
        ({"count": -3}, 0, -3),
        ("I would apply a few", 0, None),
    ],
)
async def test_the_model_picks_how_many_of_the_ranked_pool(reply, expected, asked):
    fake = FakeOptimizer(
        failure=four_edits,
        rank=lambda m: {"order": [3, 1, 0, 2], "reason": "e3 is general"},
        lr=lambda m: reply,
    )
    c = auto_ctx(meta_notes="META-NOTES-TEXT", rejected_buffer="BUFFER-TEXT")
    proposal = await LLMOptimizer(fake.client).propose(c)
    assert [e.content for e in proposal.edits] == ["e3", "e1", "e0", "e2"][:expected]
    assert proposal.lr["count"] == expected and proposal.lr["asked"] == asked
    assert proposal.lr["pool"] == 4 and proposal.lr["control"] == "autonomous"
    [prompt] = fake.prompts("lr")[:1]
    assert "META-NOTES-TEXT" in prompt and "BUFFER-TEXT" in prompt
    assert "2 items: 2 failed, 0 passed" in prompt
    assert prompt.index('"e3"') < prompt.index('"e1"')  # the pool is shown ranked
    assert any(r["kind"] == "lr" for r in proposal.reflections)


async def test_fixed_control_makes_no_lr_call():
    fake = FakeOptimizer(failure=four_edits, rank=lambda m: {"order": [3, 1, 0, 2]})
    proposal = await LLMOptimizer(fake.client).propose(ctx(results(2, 0), budget=2))
    assert "lr" not in fake.kinds() and proposal.lr is None
