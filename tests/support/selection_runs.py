"""One real training run (core.training.run_training) in a RuleWorld (TEST DOUBLES:
tests/doubles/rule_world.py), with configs/features overlays, and what it says about
selection: the gate's decisions with each candidate's true kind, the best's val and test.
Shared by the selection tests and bench/selection_sim.py."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core.config import load_config
from core.models.factory import build_model_client
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.training.trainer import run_training
from tests.doubles.rule_world import RuleWorld, RuleWorldEnv, RuleWorldTarget, ScriptedProposer

REPO = Path(__file__).resolve().parents[2]
INITIAL_SKILL = "# Rule world\n\nFollow the rules below.\n"


def sim_train(world: RuleWorld) -> dict[str, Any]:
    """The `train:` section every simulated run shares: one epoch, one rule per step, no
    slow update or meta notes (they would be the proposer's, and say nothing of selection)."""
    train: dict[str, Any] = {
        "epochs": 1,
        "steps_per_epoch": 8,
        "batch_size": 10,
        "shuffle": True,
        "schedule": {"kind": "constant", "start": 1, "end": 1},
        "slow_update": {"enabled": False},
        "meta_skill": {"enabled": False},
    }
    return train


def write_config(root: Path, world: RuleWorld, overlays: list[str], **train: Any) -> Path:
    base = root / "sim.yaml"
    base.write_text(
        yaml.safe_dump(
            {
                "run": {"seed": world.seed, "runs_dir": str(root / "runs")},
                "models": {
                    "target": {"backend": "scripted", "model": "rule-world", "concurrency": 1},
                    "optimizer": {"backend": "scripted", "model": "scripted-proposer"},
                },
                "cache": {"enabled": False},
                "train": sim_train(world),
            }
        )
    )
    bases = [str(base)] + [str(REPO / "configs" / "features" / f"{n}.yaml") for n in overlays]
    path = root / "run.yaml"  # the overlays on the sim's base, then the caller's keys
    path.write_text(yaml.safe_dump({"_base_": bases, "train": train}))
    return path


@dataclass
class SimRun:
    summary: Any
    decisions: list[dict[str, Any]]  # gate.json (merge_gate.json) of each judged candidate
    truly_better: list[bool]  # each judged candidate's true score beats the incumbent's
    best_skill: str
    calls: int
    run_dir: Path
    asked: Counter  # RuleWorldTarget.asked: (skill, item) -> times asked


async def train_in_world(
    root: Path, world: RuleWorld, overlays: list[str] = (), **train: Any
) -> SimRun:
    root.mkdir(parents=True, exist_ok=True)
    config = load_config(write_config(root, world, list(overlays), **train))
    target = RuleWorldTarget(world)
    client = build_model_client(config, scripted={"target": target})
    proposer = ScriptedProposer(world)
    run_dir = RunDirectory(root / "run")
    try:
        summary = await run_training(
            config,
            run_dir=run_dir,
            bus=EventBus(),
            client=client,
            env=RuleWorldEnv(world),
            strategy=proposer,
            initial_skill=INITIAL_SKILL,
            sequential=True,
        )
    finally:
        await client.aclose()
    decisions, better = [], []
    incumbent = INITIAL_SKILL
    judged = [  # each step's candidate, then its Pareto merge
        (step / gate, step / text)
        for step in sorted(run_dir.path.glob("steps/*"))
        for gate, text in (("gate.json", "candidate.md"), ("merge_gate.json", "merge_candidate.md"))
        if (step / gate).is_file()
    ]
    for gate_file, candidate_file in judged:
        info = json.loads(gate_file.read_text())
        if "items_total" not in info and "screen" not in info:
            continue  # nothing was judged
        candidate = candidate_file.read_text()
        decisions.append(info)
        better.append(world.true_score(candidate) > world.true_score(incumbent))
        if info.get("became_best"):
            incumbent = candidate
    best = (run_dir.path / "best_skill.md").read_text()
    return SimRun(summary, decisions, better, best, target.calls, run_dir.path, target.asked)


def run_sync(root: Path, world: RuleWorld, overlays: list[str] = (), **train: Any) -> SimRun:
    return asyncio.run(train_in_world(root, world, overlays, **train))
