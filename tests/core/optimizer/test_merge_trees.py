"""The published merge shape (issue 22 item 3): failure lists and success lists merged in
trees of their own, then one final merge (failures first), uncapped; the ranker sees each
edit's support (how many analyst groups proposed it or what was merged into it) and only
then is the pool clipped to the budget. Same scripted TEST DOUBLE client as
tests/core/optimizer/test_llm.py; the merge double returns the union of its inputs."""

from __future__ import annotations

import re

from core.optimizer.llm import LLMOptimizer
from core.optimizer.reflection_groups import make_groups
from tests.core.optimizer.test_llm import FakeOptimizer, ctx, first_id, results

SHARED = "Answer with the city name only."  # every failure group proposes this edit


def four_edits_per_group(messages):
    """Four edits per group: three of its own and, from failure groups, the shared one."""
    fid = first_id(messages)
    own = [{"op": "append", "content": f"{fid}-{i}", "rationale": "r"} for i in range(3)]
    last = SHARED if "the model FAILED" in messages[0]["content"] else f"{fid}-3"
    return {"analysis": fid, "edits": [*own, {"op": "append", "content": last}]}


def union_merge(merges: list[str]):
    def merge(messages):
        prompt = messages[0]["content"]
        merges.append(prompt)
        contents = re.findall(r'content: "([^"]*)"', prompt)
        edits = [{"op": "append", "content": c} for c in dict.fromkeys(contents)]
        return {"analysis": "kept everything", "edits": edits}

    return merge


async def test_five_groups_of_four_edits_at_budget_four_rank_with_support():
    res = results(6, 4)  # minibatch 2: failure groups F0 F1 F2, success groups S0 S1
    merges: list[str] = []
    fake = FakeOptimizer(
        failure=four_edits_per_group,
        success=four_edits_per_group,
        merge=union_merge(merges),
        rank=lambda m: {"order": [0, 1, 2, 3], "reason": "support first"},
    )
    c = ctx(res, budget=4, edit_budget=4, minibatch_size=2, merge_batch_size=2, seed=5)
    proposal = await LLMOptimizer(fake.client).propose(c)
    groups = make_groups(res, seed=5, size=2)
    f = [g.results[0].item_id for g in groups if g.kind == "failure"]
    s = [g.results[0].item_id for g in groups if g.kind == "success"]
    assert (len(f), len(s)) == (3, 2)
    nodes = [r for r in proposal.reflections if r["kind"] == "merge"]
    kinds = [[i["kind"] for i in n["inputs"]] for n in nodes]
    # Failure tree (F0,F1) then (M,F2); success tree (S0,S1); final (failures, successes).
    assert sorted(map(tuple, kinds)) == sorted(
        [
            ("failure", "failure"),
            ("failure", "failure"),
            ("success", "success"),
            ("failure", "success"),
        ]
    )
    assert not any(set(k) == {"failure", "success"} for k in kinds[:-1])
    final = merges[-1]
    assert final.index("List 1 (from failures)") < final.index("List 2 (from successes)")
    assert "at most" not in final  # uncapped: the merged pool is every distinct edit
    assert len(proposal.merged) == 3 * 3 + 1 + 2 * 4  # 18 > budget 4: the ranker runs
    [rank] = fake.prompts("rank")
    shared = next(i for i, e in enumerate(proposal.merged) if e.content == SHARED)
    assert f"[{shared}] (support: 3) op: append" in rank  # three failure groups proposed it
    assert "[0] (support: 1) op: append" in rank and "of the step's 5 analyst groups" in rank
    assert len(proposal.edits) == 4  # clipped to the budget after ranking
    assert proposal.reflections[-1]["support"][:1] == [1]


async def test_capped_merges_keep_the_old_cap_and_never_rank_at_budget_four():
    merges: list[str] = []

    def capped_merge(messages):
        union_merge(merges)(messages)
        n = int(re.search(r"of at most (\d+) edits", messages[0]["content"]).group(1))
        contents = re.findall(r'content: "([^"]*)"', messages[0]["content"])
        return {"analysis": "a", "edits": [{"op": "append", "content": c} for c in contents[:n]]}

    fake = FakeOptimizer(
        failure=four_edits_per_group, success=four_edits_per_group, merge=capped_merge
    )
    c = ctx(results(6, 4), budget=4, minibatch_size=2, merge_batch_size=2, seed=5)
    proposal = await LLMOptimizer(fake.client, merges="capped").propose(c)
    assert len(proposal.merged) == 4 and "rank" not in fake.kinds()


def the_same_two_edits(messages):
    """Every analyst proposes the same two edits (a small model often repeats itself)."""
    edits = [{"op": "append", "content": c, "rationale": "r"} for c in ("one", "two")]
    return {"analysis": "same", "edits": edits}


def same_edits_twice(**optimizer):
    """Two failure groups that propose the same two edits, at budget 1 (so the ranker
    shows each edit's support)."""
    merges: list[str] = []
    fake = FakeOptimizer(
        failure=the_same_two_edits,
        merge=union_merge(merges),
        rank=lambda m: {"order": [0], "reason": "r"},
    )
    c = ctx(results(4, 0), budget=1, minibatch_size=2, merge_batch_size=8)
    return fake, merges, LLMOptimizer(fake.client, **optimizer).propose(c)


async def test_two_lists_of_the_same_edits_are_merged_as_published():
    """Published merges every analyst patch with edits, duplicates included: two failure
    groups proposing the same edits cost one merge call. Fails on the old code, which kept
    each edit once before merging, dropped the emptied second list and made no call (seen
    side by side: ours analyst 2, published analyst 2 + merge 1)."""
    fake, merges, proposing = same_edits_twice()
    proposal = await proposing
    assert fake.kinds().count("failure") == 2 and len(merges) == 1
    assert merges[0].count('content: "one"') == 2  # the merge sees both lists whole
    assert [e.content for e in proposal.merged] == ["one", "two"]
    assert proposal.reflections[-1]["support"] == [2, 2]  # both groups behind each edit


async def test_deduped_merges_keep_each_edit_once_and_skip_the_emptied_list():
    """`deduped_merges` (train.optimizer.dedupe_before_merge): our earlier order, no call."""
    fake, merges, proposing = same_edits_twice(dedupe_before_merge=True)
    proposal = await proposing
    assert fake.kinds().count("failure") == 2 and merges == []
    assert [e.content for e in proposal.merged] == ["one", "two"]
    assert proposal.reflections[-1]["support"] == [2, 2]
