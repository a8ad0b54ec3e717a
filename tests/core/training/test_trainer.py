"""The loop on the hand-checkable scenario (tests/support/train_scenario.py): the
skill-sensitive TEST DOUBLE as target, the fewshot strategy, exact scores step by step.

Expected values, derived from the double's documented behaviour (not from a run):
- baseline: the initial skill has fact lines for France and Japan but no format rule, so
  v03/v04 are answered "The answer is Paris." (hard 0); the others "I don't know." -> 0/5.
- step 0 (t01 t02 t03): t01/t02 "extra words", t03 "wrong answer"; 2 of 3 failures say
  "extra words" -> the format rule fires; 3 worked examples; budget 4 fits all 4 edits.
  Candidate: v03, v04 (fact + terse) and v05 (t03's example) right -> 3/5 > 0 -> accepted.
- step 1 (t04 t05 t06): all unknown ("I don't know." is a wrong answer, no rule); the 3
  examples teach nothing on val -> 3/5 again: a tie, rejected. v01 and v02 come first and
  fail, so after 2 items at most 3/5 is reachable: rejected early, 3 rollouts saved.
- step 2 (t01 t02 t03): all right with the accepted skill -> no failures, no edits.
- step 3 (t04 t05 t06): as step 1 -> tie, rejected early, 3 saved.
- finish: final == best; test: initial 0/3, best 2/3 (x02 example, x03 fact), final 2/3.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.run.directory import RunDirectory
from core.run.events import (
    CandidateProposed,
    EpochFinished,
    EventBus,
    GateDecided,
    RunFailed,
    RunFinished,
    RunStarted,
    StepFinished,
    read_events,
)
from core.training.trainer import batch_for_step, run_training
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config


def make(tmp_path: Path, *, target=None, overrides: dict | None = None, **train):
    tree = scenario_config(tmp_path, **train)
    for dotted, value in (overrides or {}).items():
        node = tree
        *parents, last = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    config = config_from_dict(tree)
    target = target or SkillSensitiveTarget()
    client = build_model_client(
        config, scripted={"target": target}, cache_path=tmp_path / "responses.sqlite"
    )
    return config, client, target


async def train(tmp_path: Path, out="run", **kwargs):
    config, client, target = make(tmp_path, **kwargs)
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    try:
        summary = await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / out),
            bus=bus,
            client=client,
            initial_skill=INITIAL_SKILL,
        )
    finally:
        await client.aclose()
    return summary, events, target


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


async def test_scores_step_by_step(tmp_path):
    summary, events, _ = await train(tmp_path)
    assert summary.status == "finished"
    assert summary.baseline_val == 0.0
    gates = of(events, GateDecided)
    assert [(g.step, g.accepted) for g in gates] == [(0, True), (1, False), (3, False)]
    assert gates[0].candidate_score == pytest.approx(3 / 5)
    assert gates[0].items_improved == 3 and gates[0].items_regressed == 0
    assert [s.best_val for s in of(events, StepFinished)] == pytest.approx([0.6, 0.6, 0.6, 0.6])
    assert summary.best_val == pytest.approx(0.6)
    assert summary.final_val == pytest.approx(0.6)
    assert summary.accepted_steps == [0]
    assert summary.test["initial"]["hard"] == 0.0
    assert summary.test["best"]["hard"] == pytest.approx(2 / 3)
    assert summary.test["final"]["hard"] == pytest.approx(2 / 3)
    assert summary.rollouts_saved == 6
    assert len(of(events, EpochFinished)) == 2
    assert of(events, RunFinished)[-1].status == "finished"


async def test_accepted_skill_has_rule_and_examples(tmp_path):
    summary, _, _ = await train(tmp_path)
    best = (tmp_path / "run" / "best_skill.md").read_text()
    assert best.startswith(INITIAL_SKILL)
    assert "Answer with the answer only: no sentence, no punctuation." in best
    for question in ("France", "Japan", "Peru"):
        assert f"Q: What is the capital of {question}?" in best
    assert "Kenya" not in best  # taught only by rejected candidates


async def test_ties_reject_with_full_scoring(tmp_path):
    summary, events, _ = await train(tmp_path, gate={"early_decide": False})
    gates = of(events, GateDecided)
    assert [(g.step, g.accepted) for g in gates] == [(0, True), (1, False), (3, False)]
    # Scored in full: the tie is visible as an equal score, and it is rejected.
    assert gates[1].candidate_score == pytest.approx(0.6)
    assert gates[1].best_before == pytest.approx(0.6)
    assert "ties reject" in gates[1].reason
    assert summary.rollouts_saved == 0


async def test_early_gate_makes_the_same_decisions_and_saves_rollouts(tmp_path):
    early, early_events, early_target = await train(tmp_path / "a")
    full, full_events, full_target = await train(tmp_path / "b", gate={"early_decide": False})
    decisions = lambda evs: [(g.step, g.accepted) for g in of(evs, GateDecided)]  # noqa: E731
    assert decisions(early_events) == decisions(full_events)
    assert (early.best_val, early.final_val, early.test) == (
        full.best_val,
        full.final_val,
        full.test,
    )
    assert early.rollouts_saved == 6 and full.rollouts_saved == 0
    # Step 3's candidate equals step 1's (same examples), so its val results are cached in
    # both runs: the calls saved are step 1's three; the rollouts saved count both steps.
    assert full_target.calls - early_target.calls == 3


async def test_budget_zero_means_no_edits(tmp_path):
    summary, events, _ = await train(tmp_path, schedule={"kind": "constant", "start": 0, "end": 0})
    assert of(events, CandidateProposed) == []
    assert of(events, GateDecided) == []
    assert all(s.edit_budget == 0 and not s.accepted for s in of(events, StepFinished))
    assert summary.best_val == summary.baseline_val == 0.0
    assert (tmp_path / "run" / "best_skill.md").read_text() == INITIAL_SKILL


async def test_budget_clips_edits_rules_first(tmp_path):
    _, events, _ = await train(tmp_path, schedule={"kind": "constant", "start": 1, "end": 1})
    first = of(events, CandidateProposed)[0]
    assert len(first.edits) == 1
    assert "Answer with the answer only" in first.edits[0]["content"]
    # Rule alone: v03 and v04 right -> 2/5 accepted at step 0.
    gates = of(events, GateDecided)
    assert gates[0].accepted and gates[0].candidate_score == pytest.approx(2 / 5)


async def test_run_directory_artifacts(tmp_path):
    await train(tmp_path)
    run = tmp_path / "run"
    for name in (
        "config.yaml",
        "events.jsonl",
        "state.json",
        "summary.json",
        "best_skill.md",
        "skills/v0000.md",
        "skills/v0001.md",
        "staged/step-0000.md",
    ):
        assert (run / name).exists(), name
    step0 = run / "steps" / "0000"
    for name in (
        "rollouts.jsonl",
        "reflections.json",
        "proposal.json",
        "candidate.md",
        "apply_report.json",
        "gate.json",
    ):
        assert (step0 / name).exists(), name
    proposal = json.loads((step0 / "proposal.json").read_text())
    assert proposal["budget"] == 4 and len(proposal["edits"]) == 4
    assert json.loads((step0 / "gate.json").read_text())["accepted"] is True
    rollouts = [json.loads(line) for line in (step0 / "rollouts.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in rollouts] == ["t01", "t02", "t03"]
    assert rollouts[0]["trajectory"][-1] == {"role": "assistant", "content": "The answer is Paris."}
    logged = list(read_events(run / "events.jsonl"))
    assert isinstance(logged[0], RunStarted) and isinstance(logged[-1], RunFinished)
    assert (run / "skills" / "v0000.md").read_text() == INITIAL_SKILL
    summary = json.loads((run / "summary.json").read_text())
    assert summary["usage"]["per_role"]["target"]["calls"] > 0
    assert not (run / ".owner.pid").exists()


async def test_stop_event_stops_at_a_step_boundary_and_resumes(tmp_path):
    config, client, _ = make(tmp_path)
    bus = EventBus()
    stop = asyncio.Event()
    bus.subscribe(lambda e: stop.set() if isinstance(e, StepFinished) and e.step == 1 else None)
    summary = await run_training(
        config,
        env=get_environment(config.env),
        run_dir=RunDirectory(tmp_path / "run"),
        bus=bus,
        client=client,
        initial_skill=INITIAL_SKILL,
        stop=stop,
    )
    await client.aclose()
    assert summary.status == "stopped" and summary.steps_done == 2
    assert "resume" in summary.reason
    resumed, events, _ = await train(tmp_path)
    assert resumed.status == "finished"
    assert of(events, RunStarted)[0].resumed and of(events, RunStarted)[0].start_step == 2
    assert resumed.best_val == pytest.approx(0.6)


async def test_budget_cap_stops_then_resumes_with_a_higher_cap(tmp_path):
    # The double's tokens are words; ~45 per rollout: a cap of 300 is hit during step 0.
    summary, events, _ = await train(tmp_path, overrides={"budget.max_tokens": 300})
    assert summary.status == "stopped"
    assert "budget" in summary.reason and "rerun" in summary.reason
    assert of(events, RunFinished)[-1].status == "stopped"
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["status"] == "stopped" and not state["finished"]
    resumed, _, _ = await train(tmp_path, overrides={"budget.max_tokens": 100_000})
    assert resumed.status == "finished"
    assert resumed.best_val == pytest.approx(0.6)


async def test_unexpected_exception_emits_run_failed_and_reraises(tmp_path):
    class Boom(RuntimeError):
        pass

    def exploding(request):
        raise Boom("responder exploded")

    with pytest.raises(Boom):
        await train(tmp_path, target=exploding)
    logged = list(read_events(tmp_path / "run" / "events.jsonl"))
    assert isinstance(logged[-1], RunFailed) and "responder exploded" in logged[-1].error
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["status"] == "failed"


def test_batches_are_seeded_per_epoch_and_cover_the_split():
    from core.environment.contract import TaskItem

    items = [TaskItem(id=f"i{n}", task_type="t", question="q", answer="a") for n in range(10)]
    epoch0 = [batch_for_step(items, k, 3, 4, seed=7, shuffle=True) for k in range(3)]
    again = [batch_for_step(items, k, 3, 4, seed=7, shuffle=True) for k in range(3)]
    assert epoch0 == again
    first_ten = [i.id for b in epoch0 for i in b][:10]
    assert sorted(first_ten) == sorted(i.id for i in items)  # one pass before repeating
    epoch1 = [batch_for_step(items, 3 + k, 3, 4, seed=7, shuffle=True) for k in range(3)]
    assert epoch1 != epoch0
    assert [i.id for i in batch_for_step(items, 0, 3, 4, seed=7, shuffle=False)] == [
        "i0",
        "i1",
        "i2",
        "i3",
    ]


class GuidanceStrategy:
    """Fewshot plus a fixed slow-update guidance (to exercise the epoch-end paths)."""

    name = "fewshot+guidance"

    def __init__(self, guidance: str):
        from core.optimizer.fewshot import FewshotStrategy

        self.inner = FewshotStrategy()
        self.guidance = guidance
        self.contexts = []

    async def propose(self, ctx):
        return await self.inner.propose(ctx)

    async def slow_update(self, ctx):
        self.contexts.append(ctx)
        return self.guidance

    async def meta_notes(self, ctx):
        return await self.inner.meta_notes(ctx)


async def run_with(tmp_path, strategy, **train_overrides):
    config, client, _ = make(tmp_path, **train_overrides)
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    summary = await run_training(
        config,
        env=get_environment(config.env),
        run_dir=RunDirectory(tmp_path / "run"),
        bus=bus,
        client=client,
        strategy=strategy,
        initial_skill=INITIAL_SKILL,
    )
    await client.aclose()
    return summary, events


async def test_gated_slow_update_is_accepted_only_if_strictly_better(tmp_path):
    # "- Norway: Oslo" teaches v01: 4/5 > 3/5 -> the guidance block is accepted at epoch 2.
    strategy = GuidanceStrategy("- Norway: Oslo")
    summary, events = await run_with(
        tmp_path, strategy, slow_update={"sample_size": 6, "gated": True}
    )
    # As published, at the end of every epoch, the last one included (issue 22 item 5:
    # the old loop never ran it after the last epoch).
    ctx, last = strategy.contexts
    assert (ctx.epoch, last.epoch) == (0, 1) and ctx.previous_skill == INITIAL_SKILL
    assert ctx.current_skill != INITIAL_SKILL  # step 0's accepted candidate
    # t01-t03 are right with step 0's rule and examples, t04-t06 still unknown.
    outcomes = [p.outcome for p in ctx.pairs]
    assert outcomes.count("improved") == 3 and outcomes.count("still_failing") == 3
    epochs = of(events, EpochFinished)
    # After the last epoch the reply is the guidance already there: no change, no gate.
    assert "- Norway: Oslo" in last.current_guidance
    assert [e.slow_update_accepted for e in epochs] == [True, None]
    assert summary.best_val == pytest.approx(0.8) and summary.final_val == pytest.approx(0.8)
    best = (tmp_path / "run" / "best_skill.md").read_text()
    assert "<!-- skillopt:slow-update:start -->" in best and "- Norway: Oslo" in best


async def test_ungated_slow_update_goes_into_current_and_the_finish_promotes_it(tmp_path):
    """Published default (slow_update.gated false): no val pass at the epoch end; the
    final skill is gated at the finish and becomes best only if strictly better."""
    useless = GuidanceStrategy("Keep answers short.")
    summary, _ = await run_with(
        tmp_path / "a", useless, slow_update={"sample_size": 6, "gated": False}
    )
    assert summary.final_val == pytest.approx(0.6)  # a tie: scored, not promoted
    assert summary.best_val == pytest.approx(0.6) and summary.best_version == 1
    assert summary.test["final"]["skill_hash"] != summary.test["best"]["skill_hash"]
    useful = GuidanceStrategy("- Norway: Oslo")
    summary, _ = await run_with(
        tmp_path / "b", useful, slow_update={"sample_size": 6, "gated": False}
    )
    assert summary.final_val == pytest.approx(0.8) and summary.best_val == pytest.approx(0.8)
    assert summary.test["final"]["skill_hash"] == summary.test["best"]["skill_hash"]
    # The guidance was in the current skill from epoch 2 on: the next step's candidate,
    # built on it, beat the best (so the finish had nothing left to promote).
    assert summary.accepted_slow_updates == [1]
    assert "- Norway: Oslo" in (tmp_path / "b" / "run" / "best_skill.md").read_text()


async def test_llm_strategy_runs_the_same_loop(tmp_path):
    """The `llm` strategy behind a scripted optimizer (TEST DOUBLE replies in the prompts'
    JSON shapes) goes through the same apply / gate / stage path as fewshot."""
    import json as _json

    from core.models.types import Request

    def optimizer(request: Request) -> str:
        prompt = " ".join(str(m.get("content", "")) for m in request.messages)
        if "epoch-level guidance" in prompt:
            return _json.dumps({"guidance": "Answer with only the city name."})
        if "notes for yourself" in prompt:
            return _json.dumps({"notes": "format rules helped"})
        if '"order"' in prompt:
            return _json.dumps({"order": [0], "reason": "only one"})
        return _json.dumps(
            {
                "analysis": "answers are sentences",
                "edits": [
                    {
                        "op": "append",
                        "target": "",
                        "content": "Answer with only the city name.",
                        "rationale": "the scorer wants the bare answer",
                    }
                ],
            }
        )

    tree = scenario_config(tmp_path, strategy="llm")
    config = config_from_dict(tree)
    client = build_model_client(
        config, scripted={"target": SkillSensitiveTarget(), "optimizer": optimizer}
    )
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    summary = await run_training(
        config,
        env=get_environment(config.env),
        run_dir=RunDirectory(tmp_path / "run"),
        bus=bus,
        client=client,
        initial_skill=INITIAL_SKILL,
    )
    await client.aclose()
    assert summary.strategy == "llm"
    gates = of(events, GateDecided)
    # The format rule alone makes v03 and v04 right: 2/5 at step 0; later identical
    # appends change the text but not the score -> ties reject.
    assert gates[0].accepted and gates[0].candidate_score == pytest.approx(2 / 5)
    assert not any(g.accepted for g in gates[1:])
    assert summary.best_val == pytest.approx(0.4)
    assert summary.usage["per_role"]["optimizer"]["calls"] > 0


async def test_budget_stops_anywhere_resume_like_an_uninterrupted_run(tmp_path):
    """Stopping mid-step keeps the state of the last step boundary: whatever the cap, the
    resumed run ends with the uninterrupted run's scores and best skill, and the calls of
    both attempts add up to the uninterrupted run's (nothing is paid twice)."""
    reference, _, ref_target = await train(tmp_path / "ref")
    ref_best = (tmp_path / "ref" / "run" / "best_skill.md").read_bytes()
    keys = ("baseline_val", "best_val", "final_val", "test", "accepted_steps", "best_version")
    for cap in (150, 450, 650, 900, 1100):
        root = tmp_path / f"cap{cap}"
        stopped, _, first = await train(root, overrides={"budget.max_tokens": cap})
        assert stopped.status == "stopped", cap
        resumed, _, second = await train(root, overrides={"budget.max_tokens": 10**6})
        assert resumed.status == "finished"
        assert {k: getattr(resumed, k) for k in keys} == {k: getattr(reference, k) for k in keys}
        assert (root / "run" / "best_skill.md").read_bytes() == ref_best
        assert first.calls + second.calls == ref_target.calls, cap
