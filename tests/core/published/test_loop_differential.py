"""The loop's pure decisions against the published package, on generated inputs: the edit
budget schedules, the gate's accept/reject over a run of candidates, the merge tree's
shape, the epoch's minibatches and the slow update's pair classification.

Where ours differs on purpose the test says so and keeps to the domain both define: the
schedules for start >= end (the published min_lr clamps an increasing schedule flat), and
the minibatches' order (both seed a shuffle per epoch, with different seeds: the sizes and
the coverage are what is compared)."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from core.config import GateConfig, ScheduleConfig
from core.environment.contract import RolloutResult, TaskItem
from core.optimizer.merge_tree import merge_trees, merged_kind
from core.training.epoch_review import pair_outcome
from core.training.gate import EarlyGate, item_metric
from core.training.minibatch import batch_for_step
from core.training.schedule import edit_budget_for_step

SLOW = settings(max_examples=100, deadline=None)

# Published names of the four outcomes of a pair (ours read better in the prompts).
PUBLISHED_OUTCOME = {
    "improved": "improved",
    "regressed": "regressed",
    "still_failing": "persistent_fail",
    "still_passing": "stable_success",
}


@SLOW
@given(
    kind=st.sampled_from(["constant", "linear", "cosine"]),
    end=st.integers(0, 6),
    extra=st.integers(0, 8),
    total=st.integers(1, 40),
)
def test_schedules_match_published(published_oracle, kind, end, extra, total):
    start = end + extra
    schedule = ScheduleConfig(kind=kind, start=start, end=end)
    ours = [edit_budget_for_step(schedule, step, total) for step in range(total)]
    theirs = published_oracle("schedule", mode=kind, start=start, end=end, total_steps=total)
    assert ours == theirs


@SLOW
@given(
    n=st.integers(1, 12),
    initial=st.integers(0, 12),
    candidates=st.lists(st.integers(0, 12), min_size=1, max_size=8),
)
def test_gate_decisions_match_published(published_oracle, n, initial, candidates):
    """Hard metric, scores as k of n items passing; ties reject in both."""
    initial, candidates = min(initial, n), [min(k, n) for k in candidates]
    theirs = published_oracle("gate", initial=initial / n, candidates=[k / n for k in candidates])
    best, ours = initial / n, []
    for k in candidates:
        gate = EarlyGate(best, n)
        for i in range(n):
            gate.add(item_metric(float(i < k), 0.0, GateConfig()))
            if gate.decided() is not None:
                break
        decision = gate.finish() if gate.items_scored == n else gate.decided()
        assert decision is not None
        ours.append(decision.accepted)
        if decision.accepted:
            best = decision.candidate_score
    assert ours == [action != "reject" for action in theirs]


@dataclass
class Node:
    kind: str
    level: int = 0


@SLOW
@given(failures=st.integers(0, 20), successes=st.integers(0, 20), size=st.integers(2, 8))
def test_merge_tree_shape_matches_published(published_oracle, failures, successes, size):
    """Which lists each merge call combines, by tree (failure, success, final) and level."""
    calls: list[list] = []

    async def merge(batch: list[Node], _index: int) -> Node:
        kind = merged_kind(batch)
        if kind in ("failure", "success"):
            level = max(node.level for node in batch) + 1
            calls.append([kind, level, len(batch)])
        else:
            level = 0
            calls.append(["final", 0, len(batch)])
        return Node(kind, level)

    lists = [Node("failure") for _ in range(failures)] + [Node("success") for _ in range(successes)]
    asyncio.run(merge_trees(lists, size, merge))
    ours = sorted(calls, key=lambda c: (c[0] == "final", c[0], c[1]))
    theirs = published_oracle(
        "merge_shape", failures=failures, successes=successes, batch_size=size
    )
    assert ours == theirs


@SLOW
@given(n=st.integers(1, 30), batch=st.integers(1, 12), epoch=st.integers(1, 3))
def test_epoch_minibatches_have_published_sizes_and_coverage(published_oracle, n, batch, epoch):
    ids = [f"i{k}" for k in range(n)]
    items = [TaskItem(id=i, task_type="t", question="q", answer="a") for i in ids]
    steps = math.ceil(n / batch)
    theirs = published_oracle(
        "epoch_batches", ids=ids, epoch=epoch, steps_per_epoch=steps, batch_size=batch, seed=0
    )
    ours = [
        [item.id for item in batch_for_step(items, (epoch - 1) * steps + k, steps, batch, 0, True)]
        for k in range(steps)
    ]
    assert [len(b) for b in ours] == [len(b) for b in theirs]
    assert sorted(sum(ours, [])) == sorted(sum(theirs, [])) == sorted(ids)


def rollout(hard: float) -> RolloutResult:
    return RolloutResult("x", "t", "q", "a", "p", hard, hard, "", [])


@SLOW
@given(
    pairs=st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])))
)
def test_pair_outcomes_match_published(published_oracle, pairs):
    """A pass is any nonzero hard score, as published (0.5 -> 1.0 is still passing)."""
    theirs = published_oracle(
        "pair_categories", prev=[p for p, _ in pairs], curr=[c for _, c in pairs]
    )
    ours = [PUBLISHED_OUTCOME[pair_outcome(rollout(p), rollout(c))] for p, c in pairs]
    assert ours == theirs
