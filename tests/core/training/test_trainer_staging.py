"""Staging from the loop: every accepted candidate is staged once and recorded distinctly,
even when a step's candidate and its epoch's slow update are accepted at the same step;
a step abandoned after an acceptance leaves best_skill.md as the restored state says.
On the scenario of tests/support/train_scenario.py (see tests/core/training/test_trainer.py).

With EpochEndStrategy: step 0 is accepted (3/5, as in the plain scenario); step 1's
candidate (the last of epoch 1) appends "- Sweden: Stockholm" (v02 right: 4/5 > 3/5,
accepted); the slow update at the boundary to epoch 2 (its marker is step 1 too) adds
"- Norway: Oslo" (5/5, accepted). Nothing after that can beat 5/5.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.types import BudgetExceeded
from core.optimizer.fewshot import FewshotStrategy
from core.optimizer.strategy import Proposal
from core.run.directory import RunDirectory
from core.run.events import EventBus
from core.skill.edits import Edit
from core.training.trainer import run_training
from envs import get_environment
from tests.doubles.skill_sensitive_target import SkillSensitiveTarget
from tests.support.train_scenario import INITIAL_SKILL, scenario_config


class EpochEndStrategy:
    """Fewshot, except that step 1 teaches Sweden; the slow update teaches Norway. Its
    meta notes can be told to fail once (`meta_failure`), after the slow update."""

    name = "fewshot+epoch-end"

    def __init__(self, meta_failure: BaseException | None = None):
        self.inner = FewshotStrategy()
        self.meta_failure = meta_failure

    async def propose(self, ctx):
        if ctx.step == 1:
            return Proposal(edits=[Edit("append", "", "- Sweden: Stockholm", "teach Sweden")])
        return await self.inner.propose(ctx)

    async def slow_update(self, ctx):
        return "- Norway: Oslo"

    async def meta_notes(self, ctx):
        if self.meta_failure is not None:
            failure, self.meta_failure = self.meta_failure, None
            raise failure
        return await self.inner.meta_notes(ctx)


async def train(tmp_path: Path, strategy, stager=None):
    # Gated slow updates (configs/features/gated_slow_update.yaml) are staged at their
    # epoch's last step; the published, ungated ones only through the finish.
    config = config_from_dict(
        scenario_config(tmp_path, slow_update={"sample_size": 6, "gated": True})
    )
    client = build_model_client(
        config,
        scripted={"target": SkillSensitiveTarget()},
        cache_path=tmp_path / "responses.sqlite",
    )
    try:
        return await run_training(
            config,
            env=get_environment(config.env),
            run_dir=RunDirectory(tmp_path / "run"),
            bus=EventBus(),
            client=client,
            strategy=strategy,
            stager=stager,
            initial_skill=INITIAL_SKILL,
        )
    finally:
        await client.aclose()


def staged_of(tmp_path: Path) -> list[tuple[int, str]]:
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    return [(r["step"], r["source"]) for r in state["staged_refs"]]


async def test_step_and_slow_update_of_one_step_are_both_staged(tmp_path):
    summary = await train(tmp_path, EpochEndStrategy())
    assert summary.best_val == pytest.approx(1.0)
    assert summary.accepted_steps == [0, 1]
    assert [(r["step"], r["source"]) for r in summary.staged] == [
        (0, "step"),
        (1, "step"),
        (1, "slow_update"),
    ]
    staged = tmp_path / "run" / "staged"
    step1 = (staged / "step-0001.md").read_text()
    slow1 = (staged / "slow_update-0001.md").read_text()
    assert "- Sweden: Stockholm" in step1 and "- Norway: Oslo" not in step1
    assert "- Norway: Oslo" in slow1
    assert json.loads((staged / "slow_update-0001.json").read_text())["source"] == "slow_update"
    assert len({r["ref"] for r in summary.staged}) == 3


async def test_git_stager_commits_step_and_slow_update_of_one_step(tmp_path):
    from core.skills_repo import SkillsRepo, SkillsRepoStager

    repo = SkillsRepo.init(tmp_path / "skills", identity=("Test", "test@example.com"))
    repo.add_skill("capitals", INITIAL_SKILL)
    summary = await train(tmp_path, EpochEndStrategy(), SkillsRepoStager(repo, "capitals", "run"))
    (branch,) = repo.staged_branches()
    assert branch.commits == 3
    refs = [r["ref"] for r in summary.staged]
    assert len(set(refs)) == 3 and refs[-1] == branch.head
    assert "- Norway: Oslo" in repo.read_skill("capitals", branch.head)
    # each commit says on how many val items it was gated and how sure that is: the
    # scenario has 5 val items, and each acceptance changes some of them only one way
    trailers = [c.trailers for c in repo.diff(branch.name).evidence]
    assert [t["Val-Items"] for t in trailers] == ["5", "5", "5"]
    assert [(t["Items-Improved"], t["Items-Regressed"], t["Evidence"]) for t in trailers] == [
        ("3", "0", "p=0.25"),  # 2 / 2^3
        ("1", "0", "p=1"),
        ("1", "0", "p=1"),
    ]


@pytest.mark.parametrize(
    ("failure", "status"),
    [(BudgetExceeded("token budget reached"), "stopped"), (RuntimeError("meta down"), "failed")],
)
async def test_abandoned_epoch_review_restores_best_skill_and_restages_once(
    tmp_path, failure, status
):
    from core.skills_repo import SkillsRepo, SkillsRepoStager

    repo = SkillsRepo.init(tmp_path / "skills", identity=("Test", "test@example.com"))
    repo.add_skill("capitals", INITIAL_SKILL)
    strategy = EpochEndStrategy(meta_failure=failure)
    if status == "stopped":
        stopped = await train(tmp_path, strategy, SkillsRepoStager(repo, "capitals", "run"))
        assert stopped.status == "stopped"
    else:
        with pytest.raises(RuntimeError, match="meta down"):
            await train(tmp_path, strategy, SkillsRepoStager(repo, "capitals", "run"))
    run = tmp_path / "run"
    state = json.loads((run / "state.json").read_text())
    assert state["status"] == status and state["epochs_reviewed"] == 0
    # The slow update was accepted (and staged) before the failure, and is a boundary of
    # its own (issue 22: the stopped run reported the best val from before it): the
    # state records it, and best_skill.md agrees with the state.
    assert state["epoch_review"]["accepted"] is True
    best = (run / "best_skill.md").read_text()
    assert best == (run / "skills" / f"v{state['best_version']:04d}.md").read_text()
    assert "- Norway: Oslo" in best and "- Sweden: Stockholm" in best
    assert staged_of(tmp_path) == [(0, "step"), (1, "step"), (1, "slow_update")]

    resumed = await train(tmp_path, strategy, SkillsRepoStager(repo, "capitals", "run"))
    assert resumed.status == "finished" and resumed.best_val == pytest.approx(1.0)
    assert "- Norway: Oslo" in (run / "best_skill.md").read_text()
    (branch,) = repo.staged_branches()
    assert branch.commits == 3  # the slow update staged before the failure is not doubled
    assert staged_of(tmp_path) == [(0, "step"), (1, "step"), (1, "slow_update")]
