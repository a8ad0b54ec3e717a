"""The `llm` strategy's deviations from the published method (issue 15): merge-tree labels
and the meta notes reaching the merge and rank prompts. Same scripted TEST DOUBLE client as
tests/core/optimizer/test_llm.py."""

from __future__ import annotations

from core.optimizer.llm import LLMOptimizer
from tests.core.optimizer.test_llm import FakeOptimizer, ctx, one_edit_per_group, results


def two_edits(messages):
    return {
        "analysis": "merged",
        "edits": [
            {"op": "append", "content": "merged-a", "rationale": "r"},
            {"op": "append", "content": "merged-b", "rationale": "r"},
        ],
    }


async def test_a_list_merged_from_failures_and_successes_is_not_labelled_failures():
    # Capped merges (one shared tree): 1 failure group + 2 success groups, merged two at a
    # time: level one merges [failure, success] (mixed) and passes the last success list
    # through; level two sees the mixed list, which must not claim to come from failures.
    fake = FakeOptimizer(failure=one_edit_per_group, success=one_edit_per_group, merge=two_edits)
    c = ctx(results(2, 16), minibatch_size=8, merge_batch_size=2, budget=8)
    await LLMOptimizer(fake.client, merges="capped").propose(c)
    merges = fake.prompts("merge")
    assert len(merges) == 2
    top = merges[-1]
    assert "(from failures and successes)" in top
    assert "(from failures)" not in top


async def test_meta_notes_reach_the_merge_and_rank_prompts():
    fake = FakeOptimizer(
        failure=one_edit_per_group,
        success=one_edit_per_group,
        merge=two_edits,
        rank=lambda m: {"order": [1, 0], "reason": "r"},
    )
    c = ctx(results(3, 3), budget=1, meta_notes="META-NOTES-TEXT")
    await LLMOptimizer(fake.client).propose(c)
    assert fake.prompts("merge") and fake.prompts("rank")
    for kind in ("merge", "rank"):
        assert all("META-NOTES-TEXT" in p for p in fake.prompts(kind)), kind
