"""Rank-and-clip against the published package: at default (ranking selected) a step
applies exactly the edits the published `rank_and_select` keeps for the same ranker reply;
the padded_ranking overlay fills the budget in the ranker's order instead. Rewrite mode's
suggestions are ranked the same way."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.optimizer.edit_lists import ranked_selection
from core.optimizer.llm import LLMOptimizer
from tests.core.optimizer.test_llm import FakeOptimizer, ctx, results
from tests.core.optimizer.test_update_modes import rewrite, suggest


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(2, 8),
    budget=st.integers(1, 6),
    order=st.lists(st.integers(-2, 10), max_size=10),
)
def test_default_selection_matches_published(published_oracle, n, budget, order):
    edits = [{"op": "append", "content": f"e{i}"} for i in range(n)]
    reply = json.dumps({"selected_indices": order})
    theirs = published_oracle("rank_select", edits=edits, budget=budget, reply=reply)
    if n <= budget:  # the published function returns the pool without asking the ranker
        assert theirs == list(range(n))
        return
    assert ranked_selection(order, n, budget, "selected") == theirs


def three_edits(messages):
    return {"analysis": "a", "edits": [{"op": "append", "content": f"rule {i}"} for i in range(3)]}


async def test_the_issue_case_applies_only_the_ranked_rule(published_oracle):
    """{"order": [1]} with budget 2 and three edits: published applies rule 1 only."""
    fake = FakeOptimizer(failure=three_edits, rank=lambda m: {"order": [1], "reason": "r"})
    c = ctx(results(2, 0), budget=2)
    proposal = await LLMOptimizer(fake.client).propose(c)
    assert [e.content for e in proposal.edits] == ["rule 1"]
    theirs = published_oracle(
        "rank_select",
        edits=[{"op": "append", "content": f"rule {i}"} for i in range(3)],
        budget=2,
        reply=json.dumps({"selected_indices": [1]}),
    )
    assert theirs == [1]
    [prompt] = fake.prompts("rank")
    assert "at most 2" in prompt and "every edit number once" not in prompt

    fake = FakeOptimizer(failure=three_edits, rank=lambda m: {"order": [1], "reason": "r"})
    c.ranking = "padded"
    padded = await LLMOptimizer(fake.client).propose(c)
    assert [e.content for e in padded.edits] == ["rule 1", "rule 0"]
    assert "every edit number once" in fake.prompts("rank")[0]


def three_suggestions(messages):
    return {
        "analysis": "kept all",
        "suggestions": [
            {"kind": "add", "title": f"rule-q{i}", "instruction": f"Add {i}.", "priority": "high"}
            for i in range(3)
        ],
    }


async def test_rewrite_mode_uses_only_the_ranked_suggestion(published_oracle):
    """The issue's case in rewrite mode. Fails on the old code: suggestions were ranked in a
    full order, padded to the budget (rule-q1, then rule-q0)."""
    fake = FakeOptimizer(
        suggest=suggest,
        merge_suggestions=three_suggestions,
        rank_suggestions=lambda m: {"order": [1], "reason": "r"},
        rewrite=rewrite,
    )
    c = ctx(results(2, 2), budget=2, minibatch_size=2)
    proposal = await LLMOptimizer(fake.client, update_mode="rewrite").propose(c)
    assert [s["title"] for s in proposal.suggestions] == ["rule-q1"]
    pool = [{"kind": "add", "title": f"rule-q{i}", "instruction": "x"} for i in range(3)]
    reply = json.dumps({"selected_indices": [1]})
    theirs = published_oracle(
        "rank_select", edits=pool, budget=2, reply=reply, update_mode="rewrite"
    )
    assert theirs == [1]
    assert "at most 2" in fake.prompts("rank_suggestions")[0]

    fake = FakeOptimizer(
        suggest=suggest,
        merge_suggestions=three_suggestions,
        rank_suggestions=lambda m: {"order": [1], "reason": "r"},
        rewrite=rewrite,
    )
    c.ranking = "padded"
    padded = await LLMOptimizer(fake.client, update_mode="rewrite").propose(c)
    assert [s["title"] for s in padded.suggestions] == ["rule-q1", "rule-q0"]
    assert "every suggestion number once" in fake.prompts("rank_suggestions")[0]
