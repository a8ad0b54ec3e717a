"""The loop's deviations from the published method (issue 15, "Bugs"), each pinned on the
hand-checkable scenario (tests/support/train_scenario.py: the skill-sensitive TEST DOUBLE
as target) with small strategy TEST DOUBLES that record what the loop showed them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import ScheduleConfig, config_from_dict
from core.environment.contract import TaskItem
from core.models.factory import build_model_client
from core.optimizer.fewshot import FewshotStrategy
from core.optimizer.strategy import Proposal
from core.run.directory import RunDirectory
from core.run.events import CandidateProposed, EpochFinished, EventBus, RunFinished
from core.skill.edits import Edit
from core.training.minibatch import batch_for_step
from core.training.schedule import edit_budget_for_step
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config


class RecordingStrategy:
    """TEST DOUBLE strategy: fixed edits per step (else fewshot's), a fixed slow-update
    reply, and a record of every context the loop passed in."""

    name = "recording"

    def __init__(self, *, edits_by_step=None, guidance=None):
        self.inner = FewshotStrategy()
        self.edits_by_step = edits_by_step or {}
        self.guidance = guidance
        self.contexts = []
        self.epoch_contexts = []

    async def propose(self, ctx):
        self.contexts.append(ctx)
        if ctx.step in self.edits_by_step:
            edits = list(self.edits_by_step[ctx.step])
            return Proposal(edits=edits, merged=edits)
        return await self.inner.propose(ctx)

    async def slow_update(self, ctx):
        self.epoch_contexts.append(ctx)
        return self.guidance

    async def meta_notes(self, ctx):
        return await self.inner.meta_notes(ctx)


async def run(tmp_path: Path, strategy=None, *, client=None, config=None, out="run", **train):
    config = config or config_from_dict(scenario_config(tmp_path, **train))
    own = client is None
    client = client or build_model_client(
        config, scripted={"target": SkillSensitiveTarget()}, cache_path=tmp_path / "r.sqlite"
    )
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    try:
        summary = await run_training_(config, tmp_path / out, bus, client, strategy)
    finally:
        if own:
            await client.aclose()
    return summary, events


async def run_training_(config, path, bus, client, strategy):
    from core.training.trainer import run_training

    return await run_training(
        config,
        env=get_environment(config.env),
        run_dir=RunDirectory(path),
        bus=bus,
        client=client,
        strategy=strategy,
        initial_skill=INITIAL_SKILL,
    )


# --------------------------------------------------------------- slow-update markers


@pytest.mark.parametrize(
    "guidance",
    [
        "<!-- skillopt:slow-update:start -->\n- Norway: Oslo\n<!-- skillopt:slow-update:end -->",
        "<!-- skillopt:slow-update:start -->\n- Norway: Oslo",  # a half-echoed block
    ],
)
async def test_slow_update_reply_echoing_the_markers_never_fails_the_run(tmp_path, guidance):
    strategy = RecordingStrategy(guidance=guidance)
    summary, events = await run(tmp_path, strategy)
    assert summary.status == "finished"
    best = (tmp_path / "run" / "best_skill.md").read_text()
    # The echoed markers are stripped: one well-formed block holding the guidance.
    assert best.count("<!-- skillopt:slow-update:start -->") == 1
    assert best.count("<!-- skillopt:slow-update:end -->") == 1
    assert "- Norway: Oslo" in best
    assert [e.slow_update_accepted for e in events if isinstance(e, EpochFinished)] == [
        True,
        None,
    ]


async def test_slow_update_reply_of_only_markers_is_no_change(tmp_path):
    strategy = RecordingStrategy(
        guidance="<!-- skillopt:slow-update:start --><!-- skillopt:slow-update:end -->"
    )
    summary, events = await run(tmp_path, strategy)
    assert summary.status == "finished"
    assert [e.slow_update_accepted for e in events if isinstance(e, EpochFinished)] == [
        None,
        None,
    ]


# ------------------------------------------------------------------ one pass an epoch


def test_an_epoch_is_one_pass_and_its_last_batch_is_partial():
    items = [TaskItem(id=f"i{n:02d}", task_type="t", question="q", answer="a") for n in range(50)]
    batches = [batch_for_step(items, k, 2, 40, seed=3, shuffle=True) for k in range(2)]
    assert [len(b) for b in batches] == [40, 10]
    ids = [i.id for b in batches for i in b]
    assert sorted(ids) == sorted(i.id for i in items)  # every item once, none repeated


def test_more_steps_than_one_pass_start_a_fresh_pass():
    items = [TaskItem(id=f"i{n}", task_type="t", question="q", answer="a") for n in range(5)]
    batches = [batch_for_step(items, k, 4, 2, seed=0, shuffle=False) for k in range(4)]
    assert [[i.id for i in b] for b in batches[:3]] == [["i0", "i1"], ["i2", "i3"], ["i4"]]
    assert len(batches[3]) == 2


# ------------------------------------------------------------- only applied evidence


async def test_only_applied_edits_reach_the_buffer_and_the_evidence(tmp_path):
    missing = Edit("replace", "TEXT THAT IS NOT IN THE SKILL", "x", "r")
    useless = Edit("append", "", "Be careful.", "r")
    strategy = RecordingStrategy(edits_by_step={0: [missing, useless]})
    await run(tmp_path, strategy, epochs=1)
    step1 = strategy.contexts[1]
    assert "Be careful." in step1.rejected_buffer
    assert "TEXT THAT IS NOT IN THE SKILL" not in step1.rejected_buffer
    # ... while the same step asks for the unmatched edit again.
    assert [o.edit for o in step1.last_apply_report.unmatched()] == [missing]
    gate = json.loads((tmp_path / "run" / "steps" / "0000" / "gate.json").read_text())
    assert gate["accepted"] is False


async def test_candidate_event_and_staged_evidence_list_only_applied_edits(tmp_path):
    missing = Edit("replace", "TEXT THAT IS NOT IN THE SKILL", "x", "r")
    useful = Edit("append", "", "Answer with only the city name.", "terse answers")
    strategy = RecordingStrategy(edits_by_step={0: [missing, useful]})
    summary, events = await run(tmp_path, strategy, epochs=1)
    proposed = [e for e in events if isinstance(e, CandidateProposed)][0]
    assert [e["content"] for e in proposed.edits] == ["Answer with only the city name."]
    staged = summary.staged[0]
    assert staged["step"] == 0
    evidence = list((tmp_path / "run" / "staged").rglob("*.json"))
    text = "".join(p.read_text() for p in evidence)
    assert "Answer with only the city name." in text
    assert "TEXT THAT IS NOT IN THE SKILL" not in text


# -------------------------------------------------------------------------- schedule


@pytest.mark.parametrize(
    ("total", "expected"),
    [(4, [4, 3, 2, 2]), (8, [4, 4, 3, 3, 3, 2, 2, 2])],
)
def test_cosine_schedule_matches_the_published_budgets(total, expected):
    schedule = ScheduleConfig(kind="cosine", start=4, end=2)
    assert [edit_budget_for_step(schedule, s, total) for s in range(total)] == expected


# ---------------------------------------------------------------- replicate seeds


async def test_replicates_with_other_seeds_do_not_replay_target_samples(tmp_path):
    target = SkillSensitiveTarget()
    calls = []

    def counting(request):
        calls.append(request)
        return target(request)

    def client_for(config):
        client = build_model_client(
            config, scripted={"target": counting}, cache_path=tmp_path / "shared.sqlite"
        )
        client.runtime("target").cache = True  # the double, cached as a real model is
        return client

    sent: dict[str, list[str]] = {}
    for seed, out in ((0, "a"), (0, "b"), (1, "c")):
        tree = scenario_config(tmp_path, epochs=1, steps_per_epoch=1)
        tree["run"]["seed"] = seed
        config = config_from_dict(tree)
        client = client_for(config)
        before = len(calls)
        try:
            await run(tmp_path, config=config, client=client, out=out)
        finally:
            await client.aclose()
        sent[out] = [
            json.dumps(r.messages, sort_keys=True)
            for r in calls[before:]
            if r.messages[0]["content"] == INITIAL_SKILL  # baseline and step-0 rollouts
        ]
    assert sent["a"] and sent["b"] == []  # the same seed replays: what the cache is for
    # Another seed is another sample: the baseline prompts (identical, shuffle is off)
    # go to the model again.
    assert set(sent["a"]) <= set(sent["c"])


# ------------------------------------------------------------------ epoch boundary


async def test_last_apply_report_does_not_cross_the_epoch_boundary(tmp_path):
    missing = Edit("replace", "TEXT THAT IS NOT IN THE SKILL", "x", "r")
    strategy = RecordingStrategy(edits_by_step={1: [missing]})
    await run(tmp_path, strategy)
    by_step = {c.step: c for c in strategy.contexts}
    assert by_step[2].last_apply_report is None  # first step of epoch 2: a new start


async def test_meta_notes_written_between_epochs_reach_the_next_epoch(tmp_path):
    strategy = RecordingStrategy()
    summary, events = await run(tmp_path, strategy)
    by_step = {c.step: c for c in strategy.contexts}
    assert by_step[0].meta_notes == "" and by_step[1].meta_notes == ""
    assert by_step[2].meta_notes.startswith("epoch 1: ")
    assert by_step[3].meta_notes == by_step[2].meta_notes
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert finished[-1].status == "finished"
