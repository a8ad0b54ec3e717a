"""Selection beyond the paper (issue 39), measured on the rule world (TEST DOUBLES:
tests/doubles/rule_world.py) through the real training loop: the significance gate, the
screen, the Pareto frontier and its merge step."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from core.config import ConfigError, config_from_dict
from core.models.factory import build_model_client
from core.models.types import Request
from core.optimizer.strategy import Proposal
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.sign_test import sign_test_p_greater
from core.training.frontier import add_member, merge_pair, pick_parent, win_counts
from core.training.trainer import run_training
from envs import get_environment
from tests.doubles.rule_world import RuleWorld, RuleWorldTarget
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.selection_runs import train_in_world
from tests.support.train_scenario import scenario_config

NULL_WORLD = {"helpful": 0, "neutral": 8, "harmful": 8}
SEEDS = 20


def test_one_sided_sign_test():
    assert sign_test_p_greater(0, 0) == 1.0
    assert sign_test_p_greater(3, 0) == pytest.approx(1 / 8)
    assert sign_test_p_greater(4, 0) == pytest.approx(1 / 16)
    assert sign_test_p_greater(0, 3) == 1.0
    assert sign_test_p_greater(5, 1) == pytest.approx(7 / 64)


def test_rule_world_target_is_noisy_per_ask_and_replays_per_seed():
    world = RuleWorld(seed=3, noise=0.3)
    skill = "- rule r00: x\n"

    def asks(target, n=40):
        messages = [{"role": "system", "content": skill}, {"role": "user", "content": "i030"}]
        request = Request(backend="scripted", model="rule-world", messages=messages)
        return [target(request) for _ in range(n)]

    first = asks(RuleWorldTarget(world))
    assert first == asks(RuleWorldTarget(world))  # the same sequence of asks replays
    assert len(set(first)) == 2  # asked again, the same item is a fresh sample


async def null_world_rates(tmp_path, overlays):
    """(candidates judged, candidates accepted) over SEEDS null-world runs."""
    judged = accepted = 0
    for seed in range(SEEDS):
        run = await train_in_world(
            tmp_path / f"{'+'.join(overlays) or 'published'}-{seed}",
            RuleWorld(seed=seed, mix=NULL_WORLD),
            overlays,
        )
        judged += len(run.decisions)
        accepted += sum(bool(d.get("became_best")) for d in run.decisions)
    return judged, accepted


async def test_null_world_fools_the_published_gate_and_not_the_significance_gate(tmp_path):
    judged, accepted = await null_world_rates(tmp_path, [])
    assert accepted > 0  # noise alone gets candidates through a "beats the mean" gate
    judged_sig, accepted_sig = await null_world_rates(tmp_path, ["significance_gate"])
    assert judged_sig > 0
    assert accepted_sig / judged_sig <= 0.1


async def test_significance_gate_records_p_and_the_items_it_counted(tmp_path):
    run = await train_in_world(tmp_path, RuleWorld(seed=0), ["significance_gate"])
    tested = [d for d in run.decisions if "significance" in d]
    assert tested, "no candidate beat the mean, so the test never ran: pick another seed"
    for d in tested:
        sig = d["significance"]
        assert sig["items_counted"] == sig["improved"] + sig["regressed"]
        assert sig["p"] == pytest.approx(sign_test_p_greater(sig["improved"], sig["regressed"]))
        assert d["became_best"] is (sig["p"] <= 0.1 and sig["gain"] > 0)
        assert f"p={sig['p']:.4g}" in d["reason"]


async def test_screen_skips_the_val_pass_for_a_candidate_that_does_not_improve(tmp_path):
    # Every rule harms and nothing is noisy: no candidate can beat the current skill on
    # the step's batch, so none may cost a val pass.
    world = RuleWorld(seed=1, noise=0.0, mix={"harmful": 6})
    run = await train_in_world(tmp_path, world, ["screen"], candidates_per_step=1)
    assert run.decisions
    for info in run.decisions:
        assert info["reason"].startswith("screened out")
        assert info["screen"]["chosen"] is None
        assert info["screen"]["candidates"][0] <= info["screen"]["incumbent"]
    assert not list(run.run_dir.glob("steps/*/step_val_rollouts.jsonl"))
    assert run.summary.best_val == run.summary.baseline_val


async def test_screen_gates_the_best_of_several_candidates(tmp_path):
    world = RuleWorld(seed=2, noise=0.0, mix={"helpful": 6, "harmful": 6})
    run = await train_in_world(tmp_path, world, ["screen"])
    chosen = [d for d in run.decisions if d["screen"]["chosen"] is not None]
    assert chosen, "no screened candidate improved: pick another seed"
    for info in chosen:
        scores = info["screen"]["candidates"]
        assert len(scores) == 3
        assert scores[info["screen"]["chosen"]] == max(scores) > info["screen"]["incumbent"]
        assert info["items_total"] == world.val  # the chosen one had the val pass


def test_several_candidates_a_step_need_the_screen():
    from core.config import ConfigError, config_from_dict

    with pytest.raises(ConfigError, match="gate.screen"):
        config_from_dict({"train": {"candidates_per_step": 2}})


def test_frontier_keeps_a_candidate_that_wins_where_the_best_loses():
    best = {"a": 1.0, "b": 1.0, "c": 0.0}
    rival = {"a": 0.0, "b": 0.0, "c": 1.0}  # lower mean, but wins c
    frontier, joined = add_member([{"version": 1, "items": best}], 2, rival, size=4, keep=1)
    assert joined and [m["version"] for m in frontier] == [1, 2]
    assert win_counts(frontier) == {1: 2, 2: 1}
    # A candidate the best beats everywhere stays out; one beating the rival everywhere
    # replaces it.
    assert add_member(frontier, 3, {"a": 1.0, "b": 0.0, "c": 0.0}, size=4, keep=1)[1] is False
    replaced, joined = add_member(frontier, 4, {"a": 0.0, "b": 1.0, "c": 1.0}, size=4, keep=1)
    assert joined and [m["version"] for m in replaced] == [1, 4]


def test_frontier_over_its_size_drops_the_member_winning_least_never_the_best():
    members = [{"version": 1, "items": {"a": 0.0, "b": 0.0, "c": 0.0, "d": 1.0}}]
    members.append({"version": 2, "items": {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}})
    frontier, joined = add_member(
        members, 3, {"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.0}, size=2, keep=1
    )
    assert joined and sorted(m["version"] for m in frontier) == [1, 3]


def test_parents_are_drawn_by_their_wins():
    frontier = [
        {"version": 1, "items": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0}},
        {"version": 2, "items": {"a": 0.0, "b": 0.0, "c": 0.0, "d": 1.0}},
    ]
    drawn = Counter(pick_parent(frontier, f"seed:{n}") for n in range(400))
    assert drawn[1] > 2 * drawn[2] > 0  # weights 3 + 1 and 1 + 1


def test_merge_pair_is_two_members_winning_disjoint_items():
    frontier = [
        {"version": 1, "items": {"a": 1.0, "b": 0.0, "c": 1.0}},
        {"version": 2, "items": {"a": 0.0, "b": 1.0, "c": 1.0}},
    ]
    assert merge_pair(frontier, []) == (1, 2)
    assert merge_pair(frontier, [[1, 2]]) is None


async def test_pareto_run_keeps_rivals_of_the_best_and_merges_disjoint_winners(tmp_path):
    world = RuleWorld(seed=2)
    run = await train_in_world(tmp_path, world, ["pareto"])
    state = json.loads((run.run_dir / "state.json").read_text())
    members = {m["version"]: m["items"] for m in state["frontier"]}
    best = state["best_items"]
    rivals = [v for v in members if v != state["best_version"]]
    assert rivals
    for version in rivals:  # each keeps an item the best loses
        assert any(score > best[item] for item, score in members[version].items())
    merges = [json.loads(p.read_text()) for p in run.run_dir.glob("steps/*/merge_gate.json")]
    judged = [m for m in merges if "items_total" in m]
    assert judged, "no merge was judged: pick another seed"
    for merge in judged:
        first, second = merge["parents"]
        text = (run.run_dir / "steps" / f"{merge['step']:04d}" / "merge_candidate.md").read_text()
        held = {r.name for r in world.held(text)}
        for parent in (first, second):
            assert {r.name for r in world.held(run_skill(run, parent))} <= held
        assert merge["source"] == "merge" and merge["parent"] == first


class NoMergeStrategy:
    """TEST DOUBLE strategy that proposes nothing and has no merge_skills."""

    name = "no-merge"

    async def propose(self, ctx) -> Proposal:
        return Proposal(edits=[])

    async def slow_update(self, ctx) -> None:
        return None

    async def meta_notes(self, ctx) -> str:
        return ""


async def test_pareto_merges_with_a_strategy_that_cannot_merge_are_refused(tmp_path):
    # Refused before any call, saying what to change, instead of a frontier whose merges
    # silently never happen.
    tree = scenario_config(tmp_path, pareto={"enabled": True, "merges": 2})
    config = config_from_dict(tree)
    target = SkillSensitiveTarget()
    asked = []
    client = build_model_client(config, scripted={"target": lambda r: asked.append(r) or target(r)})
    try:
        with pytest.raises(ConfigError, match=r"train\.pareto\.merges: 2 .*no-merge.*merges 0"):
            await run_training(
                config,
                run_dir=RunDirectory(tmp_path / "run"),
                bus=EventBus(),
                client=client,
                env=get_environment(config.env),
                strategy=NoMergeStrategy(),
            )
    finally:
        await client.aclose()
    assert asked == []


def run_skill(run, version: int) -> str:
    return (run.run_dir / "skills" / f"v{version:04d}.md").read_text()


async def test_rescore_repeats_a_passing_candidates_changed_items_under_both_skills(tmp_path):
    world = RuleWorld(seed=0, mix={"helpful": 8, "neutral": 4, "harmful": 4})
    run = await train_in_world(tmp_path, world, ["significance_gate"], gate={"rescore": 3})
    rescored = [d for d in run.decisions if "rescored" in d.get("significance", {})]
    assert rescored, "no candidate passed the first test: pick another seed"
    for info in rescored:
        sig = info["significance"]
        assert sig["rescored"]["times"] == 3
        assert sig["rescored"]["rollouts"] == 2 * 3 * sig["rescored"]["items"]
        # Each changed item was asked 1 + 3 times under the candidate (fresh samples).
        candidate = (run.run_dir / "steps" / f"{info['step']:04d}" / "candidate.md").read_text()
        asked_four = [i for i in world.item_ids("val") if run.asked[(candidate, i)] >= 4]
        assert len(asked_four) == sig["rescored"]["items"] > 0
        # On means of four samples the test counts the items whose mean moved.
        assert sig["items_counted"] <= sig["rescored"]["items"]
