"""A slow update (published: ungated, into the current skill with no val pass) becomes
best only through the finish's final-skill gate (ties, float noise included, reject),
staged with its real per-item evidence.

TEST DOUBLE environment: three val items whose soft scores are a fixed table of whether
the skill carries the slow-update guidance; no model is called. The strategy proposes no
edits and an ungated slow update adds GUIDANCE, so the final skill may differ from the best
(the initial one, scored at the baseline).

Float noise: baseline soft scores (0.3, 0.2, 0.1) average to 0.19999999999999998; the
final skill's (0.1, 0.2, 0.3) to 0.20000000000000004 -- the same mean, one float apart.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.environment.contract import RolloutResult, Score, TaskItem
from core.models.factory import build_model_client
from core.optimizer.strategy import Proposal
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.training.trainer import run_training
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import scenario_config

GUIDANCE = "Prefer the shortest answer."
BASELINE = (0.3, 0.2, 0.1)


class TableEnv:
    """TEST DOUBLE environment: val item i scores table[i] (soft) with GUIDANCE in the
    skill, BASELINE[i] without; train items score 0; nothing is sent to a model."""

    name = "table"
    version = "1"

    def __init__(self, with_guidance: tuple[float, float, float], tests: int = 0):
        self.with_guidance = with_guidance
        self.tests = tests

    def load_split(self, split: str) -> list[TaskItem]:
        count = {"train": 2, "val": 3, "test": self.tests}[split]
        return [
            TaskItem(id=f"{split}{i}", task_type="t", question=f"q{i}", answer="a")
            for i in range(count)
        ]

    async def rollout(self, item: TaskItem, skill_text: str, complete) -> RolloutResult:
        soft = 0.0
        if item.id.startswith("val"):
            table = self.with_guidance if GUIDANCE in skill_text else BASELINE
            soft = table[int(item.id[3:])]
        return RolloutResult(
            item_id=item.id,
            task_type="t",
            question=item.question,
            reference="a",
            prediction="",
            hard=0.0,
            soft=soft,
            explanation="table",
            trajectory=[],
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        return Score(0.0, 0.0, "table")


class GuidanceOnly:
    name = "guidance-only"

    async def propose(self, ctx):
        return Proposal(edits=[])

    async def slow_update(self, ctx):
        return GUIDANCE

    async def meta_notes(self, ctx):
        return ""


async def train(tmp_path: Path, with_guidance, tests: int = 0, bus: EventBus | None = None):
    tree = scenario_config(
        tmp_path,
        steps_per_epoch=1,
        final_test=tests > 0,
        gate={"metric": "soft"},
        slow_update={"sample_size": 2, "gated": False},
    )
    config = config_from_dict(tree)
    client = build_model_client(config, scripted={"target": SkillSensitiveTarget()})
    try:
        return await run_training(
            config,
            run_dir=RunDirectory(tmp_path / "run"),
            bus=bus or EventBus(),
            client=client,
            env=TableEnv(with_guidance, tests),
            strategy=GuidanceOnly(),
            initial_skill="# Skill\n",
        )
    finally:
        await client.aclose()


async def test_a_final_skill_tying_the_best_up_to_float_noise_is_not_promoted(tmp_path):
    summary = await train(tmp_path, (0.1, 0.2, 0.3))
    assert summary.final_val > summary.best_val  # one float apart: the noise is real
    assert summary.best_version == 0 and summary.staged == []
    assert not (tmp_path / "run" / "staged").exists()
    assert GUIDANCE not in (tmp_path / "run" / "best_skill.md").read_text()


async def test_a_better_ungated_slow_update_is_promoted_by_the_finish(tmp_path):
    """Published: the slow update goes into the current skill with no val pass; the
    finish's final-skill check promotes it when it beats the best, with its item counts."""
    summary = await train(tmp_path, (0.5, 0.1, 0.1))  # item 0 better, item 1 worse
    assert summary.best_val == pytest.approx(0.7 / 3) and summary.best_version == 1
    assert summary.accepted_slow_updates == [0]
    assert [(r["step"], r["source"]) for r in summary.staged] == [(2, "final")]
    staged = tmp_path / "run" / "staged" / "final-0002.json"
    evidence = json.loads(staged.read_text())
    assert (evidence["items_improved"], evidence["items_regressed"]) == (1, 1)
    assert evidence["gate"] == "strict"
    assert GUIDANCE in (tmp_path / "run" / "best_skill.md").read_text()
    gate = json.loads((tmp_path / "run" / "steps" / "0000" / "slow_update_gate.json").read_text())
    assert gate["mode"] == "ungated" and gate["accepted"] is True
    assert not (tmp_path / "run" / "steps" / "0000" / "slow_update_val_rollouts.jsonl").exists()


async def test_final_rollouts_name_the_skill_they_scored(tmp_path):
    await train(tmp_path, (0.5, 0.1, 0.1), tests=2)
    events = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").open()]
    roles = [
        (e["phase"], e["skill_role"])
        for e in events
        if e["type"] == "RolloutFinished" and e["phase"] in {"test", "final_val"}
    ]
    # The initial skill's test ran early, beside the steps (README "What runs early");
    # the finish scores the final skill (the ungated slow update's) first, then the best
    # (now it) on val and the best and final on test, side by side.
    assert roles[:2] == [("test", "initial")] * 2
    finish = roles[2:]
    assert finish[:3] == [("final_val", "final")] * 3
    assert Counter(finish[3:]) == {
        ("final_val", "best"): 3,
        ("test", "best"): 2,
        ("test", "final"): 2,
    }
    others = {e["skill_role"] for e in events if e.get("phase") in {"baseline", "train", "gate"}}
    assert others == {""}


async def test_a_worse_ungated_slow_update_is_said_not_kept_in_an_event_console_and_summary(
    tmp_path,
):
    """The strong-model run: an ungated slow update went into the running skill, the
    finish rejected the final skill (worse than the best), and nothing said so while the
    summary's accepted_slow_updates read as if it had been kept (fails on the old code:
    no FinalSkillChecked event, no final_check, no console line)."""
    import io

    from skillopt_tui.console import ConsoleLogger

    stream = io.StringIO()
    logger = ConsoleLogger(stream)
    bus = EventBus()
    bus.subscribe(logger)
    summary = await train(tmp_path, (0.0, 0.0, 0.1), bus=bus)  # worse than the baseline 0.2
    logger.close()
    assert summary.best_version == 0 and summary.accepted_slow_updates == [0]
    check = summary.final_check
    assert (check["outcome"], check["slow_updates"]) == ("rejected", [0])
    assert check["final_val"] == pytest.approx(0.1 / 3) and check["best_val"] == pytest.approx(0.2)
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["final_check"] == check
    events = [json.loads(line) for line in (tmp_path / "run" / "events.jsonl").open()]
    [event] = [e for e in events if e["type"] == "FinalSkillChecked"]
    assert (event["outcome"], event["slow_updates"], event["step"]) == ("rejected", [0], 2)
    finished = next(i for i, e in enumerate(events) if e["type"] == "RunFinished")
    assert events.index(event) < finished
    assert (
        "final skill not kept · val 0.033 vs best 0.200 · the best skill is the result "
        "(the slow update of step 0 stayed in the running skill only)"
    ) in stream.getvalue()


async def test_a_promoted_final_skill_is_said_kept(tmp_path):
    summary = await train(tmp_path, (0.5, 0.1, 0.1))
    assert summary.final_check["outcome"] == "kept" and summary.final_check["slow_updates"] == [0]
