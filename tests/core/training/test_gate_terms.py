"""The gate's optional terms (issue 15): the density term folded into the threshold (the
early gate stays exactly the full decision), and gate.repeats (each val item scored N
times, mean; repeats cached apart). Targets here are TEST DOUBLES (skill-sensitive, or a
scripted answer per repeat)."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import pytest

from core.config import GateConfig, config_from_dict
from core.models.types import Completion, Usage
from core.run.events import EventBus
from core.training.gate import EarlyGate
from core.training.rollout_cache import RolloutCache
from core.training.rollout_runner import RolloutRunner
from envs import get_environment
from tests.core.training.test_update_modes_loop import step_json, train
from tests.support.train_scenario import scenario_config


def test_margin_keeps_early_rejects_identical_to_full_decisions():
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 8)
        values = [rng.choice([0.0, 0.5, 1.0, rng.random()]) for _ in range(n)]
        best = rng.choice([0.0, 0.25, 0.5, 0.75])
        margin = Fraction(rng.randint(-40, 40), 97)
        full = EarlyGate(best, n, early_decide=False, margin=margin)
        early = EarlyGate(best, n, early_decide=True, margin=margin)
        early_decision = None
        for v in values:
            full.add(v)
            early.add(v)
            early_decision = early_decision or early.decided()
        expected = sum(map(Fraction, values)) > (Fraction(best) + margin) * n + Fraction(n, 10**9)
        assert full.finish().accepted is expected
        assert early_decision.accepted is expected


def rule_adder(request) -> str:
    prompt = request.messages[-1]["content"]
    if "epoch-level guidance" in prompt:
        return json.dumps({"reasoning": "-", "content": ""})
    if "notes for yourself" in prompt:
        return json.dumps({"reasoning": "-", "content": "-"})
    edit = {"op": "append", "content": "Never guess a capital.", "rationale": "rules"}
    return json.dumps({"analysis": "a", "edits": [edit]})


@pytest.mark.parametrize(("weight", "accepted"), [(0.0, False), (0.5, True)])
async def test_density_term_lets_a_denser_tie_through(tmp_path, weight, accepted):
    # The added rule changes no val answer (a tie on the mean): rejected without the
    # density term, accepted with it, since the skill is now more rule than fact.
    tree_gate = {"density_weight": weight}
    summary, _ = await train(tmp_path, rule_adder, gate=tree_gate)
    gate = step_json(tmp_path, 0, "gate.json")
    assert gate["accepted"] is accepted
    assert ("density" in gate) is (weight > 0)
    if weight:
        assert gate["density"]["candidate"] > gate["density"]["best"]
        assert gate["density"]["margin"] < 0
        # The published term by default: + w x the leading-word share ("Never" is one).
        d = gate["density"]
        assert d["formula"] == "published"
        assert d["margin"] == pytest.approx(-weight * (d["candidate"] - d["best"]))


async def test_repeats_score_each_item_n_times_and_cache_each_repeat(tmp_path):
    config = config_from_dict(scenario_config(tmp_path))
    env = get_environment(config.env)
    items = env.load_split("val")[:2]
    calls: list[int] = []

    def target(repeat: int):
        async def complete(messages, **settings):
            calls.append(repeat)
            text = "Oslo" if repeat == 1 else "I don't know."  # right on repeat 1 only
            return Completion(
                text=text, usage=Usage(1, 1), finish_reason="stop", latency_s=0.0, model="m"
            )

        return complete

    cache = RolloutCache(tmp_path / "r.sqlite", target_key="T", env_key="capitals:1")
    runner = RolloutRunner(
        env, target(0), cache, EventBus().emit, concurrency=1, complete_for_repeat=target
    )
    gate_cfg = GateConfig(repeats=3, early_decide=False)
    scored = await runner.score_with_gate(items, "skill", best=0.0, gate_cfg=gate_cfg, step=0)
    assert sorted(calls) == [0, 0, 1, 1, 2, 2]
    assert scored.item_metrics == {items[0].id: pytest.approx(1 / 3), items[1].id: 0.0}
    assert scored.decision.accepted  # 1/6 > 0
    again = await runner.score_with_gate(items, "skill", best=0.0, gate_cfg=gate_cfg, step=0)
    assert len(calls) == 6 and again.item_metrics == scored.item_metrics  # all cached
    assert list(itertools.islice(calls, 0, 3)) == [0, 1, 2]  # item by item


async def test_repeats_in_the_loop_baseline_and_gate_alike(tmp_path):
    summary, _ = await train(tmp_path, rule_adder, gate={"repeats": 2})
    gate = step_json(tmp_path, 0, "gate.json")
    assert gate["repeats"] == 2
    assert summary.baseline_val == pytest.approx(0.0)
