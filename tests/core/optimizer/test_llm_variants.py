"""The `llm` strategy's ablation switches (issue 15): failures only, unlimited trajectories,
the merge shown analyses and failure counts. Scripted TEST DOUBLE client (test_llm.py)."""

from __future__ import annotations

from core.optimizer.llm import LLMOptimizer
from tests.core.optimizer.test_llm import (
    FakeOptimizer,
    ctx,
    one_edit_per_group,
    result,
    results,
)
from tests.core.optimizer.test_llm_fidelity import two_edits


async def test_failures_only_asks_no_success_analyst():
    fake = FakeOptimizer(failure=one_edit_per_group, success=one_edit_per_group)
    await LLMOptimizer(fake.client, failures_only=True).propose(ctx(results(3, 3)))
    assert fake.kinds() == ["failure"]


async def test_unlimited_trajectory_shows_the_whole_item():
    long = result(0, 0.0)
    long.trajectory.append({"role": "tool", "content": "OBSERVATION " * 2000 + "THE-END"})
    for chars, whole in ((2000, False), (None, True)):
        fake = FakeOptimizer(failure=one_edit_per_group)
        await LLMOptimizer(fake.client, item_chars=chars).propose(ctx([long]))
        [prompt] = fake.prompts("failure")
        assert ("OBSERVATION " * 2000 in prompt) is whole
        assert "THE-END" in prompt  # the tail survives clipping either way


async def test_merge_can_be_shown_the_analyses_and_failure_counts():
    for context, shown in (("edits", False), ("analyses", True)):
        fake = FakeOptimizer(
            failure=one_edit_per_group, success=one_edit_per_group, merge=two_edits
        )
        await LLMOptimizer(fake.client, merge_context=context).propose(ctx(results(3, 2)))
        [merge] = fake.prompts("merge")
        assert ("analysis of q" in merge) is shown
        assert ("3 of 3 items behind this list failed." in merge) is shown
        assert ("0 of 2 items behind this list failed." in merge) is shown


async def test_published_default_shows_whole_trajectories_within_the_context_window():
    """Issue 22 item 1: by default (item_chars "auto") analysts see whole items, the
    middle of a long trajectory included; only a group that would not fit the optimizer's
    context window is clipped, to fit it (a quarter of the window kept for the reply)."""
    long = result(0, 0.0)
    middle = "STEP-" + "observation " * 3000 + "-MIDDLE"  # ~36,000 characters
    long.trajectory.append({"role": "tool", "content": middle + " THE-END"})
    fake = FakeOptimizer(failure=one_edit_per_group)
    await LLMOptimizer(fake.client).propose(ctx([long, result(1, 0.0)]))
    [prompt] = fake.prompts("failure")
    assert middle in prompt and "PREDICTION-1" in prompt  # whole, both items
    small = FakeOptimizer(failure=one_edit_per_group)
    await LLMOptimizer(small.client, context_tokens=4096).propose(ctx([long, result(1, 0.0)]))
    [clipped] = small.prompts("failure")
    assert middle not in clipped and "THE-END" in clipped and "PREDICTION-1" in clipped
    assert len(clipped) <= (4096 - 4096 // 4) * 4  # within the window, less the reply


async def test_published_merge_sees_the_whole_analyses_by_default():
    """Issue 22 item 10: the published merge is given the analysts' whole replies, their
    analyses included. Our default was edit lists only (then, with merge_context
    analyses, each analysis clipped to 1,500 characters). Fails on the old code."""
    long_analysis = "ROOT-CAUSE " + "detail " * 400 + "END-OF-ANALYSIS"  # ~2,800 chars

    def analyst(messages):
        reply = one_edit_per_group(messages)
        return {**reply, "analysis": long_analysis}

    fake = FakeOptimizer(failure=analyst, success=analyst, merge=two_edits)
    await LLMOptimizer(fake.client).propose(ctx(results(3, 2)))
    [merge] = fake.prompts("merge")
    assert long_analysis in merge
    assert "3 of 3 items behind this list failed." in merge
