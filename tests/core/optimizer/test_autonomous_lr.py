"""The autonomous learning rate (issue 15): one call per step picks how many of the ranked
pool to apply (edits in patch mode, suggestions in rewrite mode), clamped to [0, pool];
unusable replies apply nothing. Scripted TEST DOUBLE client (test_llm.py); the
trainer-level record is checked in tests/core/training/test_variants_loop.py."""

from __future__ import annotations

import re

import pytest

from core.optimizer.llm import LLMOptimizer
from tests.core.optimizer.test_llm import SKILL, FakeOptimizer, ctx, four_edits, results


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


# ------------------------------------------------------------------- rewrite mode


def four_suggestions(messages):
    return {
        "analysis": "a",
        "suggestions": [
            {"kind": "add", "title": f"s{i}", "instruction": f"Add rule s{i}.", "priority": "high"}
            for i in range(4)
        ],
    }


def rewrite_from(messages):
    chosen = re.findall(r"title: (s\d)", messages[0]["content"])
    return {"skill": SKILL + "".join(f"- {t}\n" for t in chosen), "summary": "rules"}


@pytest.mark.parametrize(
    ("reply", "expected", "asked"),
    [
        ({"count": 2, "reasoning": "two are safe", "confidence": "high", "risks": "r"}, 2, 2),
        ({"count": 99, "reasoning": "all"}, 4, 99),
        ({"count": -1}, 0, -1),
        ("carry out a few", 0, None),
    ],
)
async def test_in_rewrite_mode_the_model_picks_how_many_suggestions_go_in(reply, expected, asked):
    fake = FakeOptimizer(
        suggest=four_suggestions,
        rank_suggestions=lambda m: {"order": [2, 0, 3, 1], "reason": "s2 is general"},
        lr=lambda m: reply,
        rewrite=rewrite_from,
    )
    c = auto_ctx(meta_notes="META-NOTES-TEXT", rejected_buffer="BUFFER-TEXT")
    proposal = await LLMOptimizer(fake.client, update_mode="rewrite").propose(c)
    chosen = ["s2", "s0", "s3", "s1"][:expected]
    assert proposal.lr["count"] == expected and proposal.lr["asked"] == asked
    assert proposal.lr["pool"] == 4 and proposal.lr["control"] == "autonomous"
    assert [s["title"] for s in proposal.suggestions] == chosen
    prompt = fake.prompts("lr")[0]  # (an unusable reply gets one repair re-ask)
    assert "META-NOTES-TEXT" in prompt and "BUFFER-TEXT" in prompt and SKILL.strip() in prompt
    assert "2 items: 2 failed, 0 passed" in prompt and "4 in all" in prompt
    assert prompt.index("title: s2") < prompt.index("title: s0")  # the pool is shown ranked
    [rank] = fake.prompts("rank_suggestions")
    assert "top 4" in rank  # the whole pool is ranked, not the schedule's budget
    lr_reflection = [r for r in proposal.reflections if r["kind"] == "lr"]
    assert lr_reflection and lr_reflection[0]["text"].startswith(f"apply {expected} of 4")
    if expected:
        [rewrite] = fake.prompts("rewrite")
        assert all(f"title: {t}" in rewrite for t in chosen)
        assert not any(f"title: {t}" in rewrite for t in {"s0", "s1", "s2", "s3"} - set(chosen))
        assert proposal.candidate == SKILL + "".join(f"- {t}\n" for t in chosen)
    else:  # 0: no rewrite call, no candidate this step
        assert "rewrite" not in fake.kinds() and proposal.candidate is None


async def test_rewrite_mode_with_one_suggestion_needs_no_rank_call():
    one = {"kind": "add", "title": "s0", "instruction": "Add rule s0.", "priority": "high"}
    fake = FakeOptimizer(
        suggest=lambda m: {"analysis": "a", "suggestions": [one]},
        lr=lambda m: {"count": 1, "reasoning": "it is safe"},
        rewrite=rewrite_from,
    )
    proposal = await LLMOptimizer(fake.client, update_mode="rewrite").propose(auto_ctx())
    assert fake.kinds() == ["suggest", "lr", "rewrite"]
    assert proposal.lr["pool"] == 1 and proposal.candidate == SKILL + "- s0\n"


async def test_fixed_rewrite_mode_makes_no_lr_call():
    fake = FakeOptimizer(
        suggest=four_suggestions,
        rank_suggestions=lambda m: {"order": [3, 2, 1, 0]},
        rewrite=rewrite_from,
    )
    opt = LLMOptimizer(fake.client, update_mode="rewrite")
    proposal = await opt.propose(ctx(results(2, 0), budget=2))
    assert "lr" not in fake.kinds() and proposal.lr is None
    assert [s["title"] for s in proposal.suggestions] == ["s3", "s2"]


async def test_full_rewrite_refuses_the_autonomous_learning_rate():
    fake = FakeOptimizer()  # any call would raise KeyError
    with pytest.raises(ValueError, match="full_rewrite has no ranked pool"):
        await LLMOptimizer(fake.client, update_mode="full_rewrite").propose(auto_ctx())
