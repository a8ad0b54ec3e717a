"""`skillopt train` on `repo_tasks` with a REAL coding agent as the target, end to end:
the real `claude` / `codex` binary does each task in a fresh workspace against a scripted
brain on loopback (it adds the changelog line only when the skill says so), the `llm`
strategy asks a scripted optimizer server (OpenAI chat on loopback) for edits, the gate
accepts the edit that teaches the rule, and the candidate is staged as a commit in a
skills repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from core.models.agents.process import recorded_sessions
from core.skills_repo import SkillsRepo
from tests.support.agent_clis import AGENT_TESTS, AGENTS_SANDBOXED, MODEL, PROTOCOL, SERVER
from tests.support.loopback_agent_servers import AgentFault
from tests.support.loopback_openai import LoopbackOpenAI
from tests.support.repo_task_brain import (
    INITIAL_SKILL,
    RULE,
    SKILL_NAME,
    RepoTaskBrain,
    optimizer_reply,
)

pytestmark = AGENT_TESTS
REPO = Path(__file__).resolve().parents[2]
SKILLOPT = Path(sys.executable).parent / "skillopt"


def optimizer(record) -> str:
    return optimizer_reply(" ".join(str(m.get("content", "")) for m in record.messages))


def write_config(tmp_path: Path, agent: str, target_url: str, optimizer_url: str) -> Path:
    tree = {
        "run": {"seed": 0, "runs_dir": str(tmp_path / "runs")},
        "env": {"name": "repo_tasks"},
        "models": {
            "target": {
                "backend": agent,
                "base_url": target_url,
                "model": MODEL[agent],
                "timeout_s": 60.0,
                "max_retries": 1,
            },
            "optimizer": {"backend": "openai", "base_url": optimizer_url, "model": "scripted"},
        },
        "cache": {"path": str(tmp_path / "cache.sqlite")},
        "train": {
            "epochs": 1,
            "steps_per_epoch": 1,
            "batch_size": 3,
            "minibatch_size": 3,
            "shuffle": False,
            "strategy": "llm",
            "schedule": {"kind": "constant", "start": 2, "end": 2},
            "slow_update": {"enabled": False},
            "meta_skill": {"enabled": False},
        },
    }
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(tree))
    return path


def train(config: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(key, None)
    return subprocess.run(
        [str(SKILLOPT), "train", "--config", str(config), "--out", str(out), *extra],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("agent", AGENTS_SANDBOXED)  # confined: Claude Code's sandbox
def test_train_with_a_real_agent_target_stages_the_better_skill(agent, tmp_path):
    skills = SkillsRepo.init(tmp_path / "skills", identity=("Test", "test@example.com"))
    skills.add_skill(SKILL_NAME, INITIAL_SKILL)
    brain = RepoTaskBrain(PROTOCOL[agent])
    with SERVER[agent](brain) as target, LoopbackOpenAI(optimizer) as opt:
        config = write_config(tmp_path, agent, target.base_url, opt.base_url)
        out = tmp_path / "runs" / "agent-run"
        done = train(
            config, out, "--json", "--skills-repo", str(tmp_path / "skills"), "--skill", SKILL_NAME
        )
        assert done.returncode == 0, done.stderr
        sent_by_agent = target.sent_text()
    summary = json.loads(done.stdout)
    # Without the rule the tests pass and the changelog check fails (hard 0); the edit the
    # optimizer proposed teaches the rule, and the real agent then passes every check.
    assert summary["baseline_val"] == pytest.approx(0.0)
    assert summary["best_val"] == pytest.approx(1.0)
    assert summary["accepted_steps"] == [0]
    assert RULE in (out / "best_skill.md").read_text()
    assert RULE in sent_by_agent  # the accepted skill reached the real agent
    (branch,) = SkillsRepo.open(tmp_path / "skills").staged_branches()
    assert branch.run_id == "agent-run" and branch.commits == 1
    gate = json.loads((out / "steps" / "0000" / "gate.json").read_text())
    assert gate["accepted"] and gate["staged_ref"] == branch.head
    # Every agent session the run started was recorded for Sleep to skip.
    assert len(recorded_sessions()) >= 7
    assert summary["usage"]["per_role"]["target"]["calls"] >= 7


def test_a_usage_limit_stops_the_run_resumably(tmp_path):
    """Codex on a plan that hit its limit: one line saying when to come back, exit 1, and
    the same command later resumes and finishes."""
    brain = RepoTaskBrain("openai")
    limited = lambda record: AgentFault.usage_limit(int(time.time()) + 3600)  # noqa: E731
    with SERVER["codex"](limited) as target, LoopbackOpenAI(optimizer) as opt:
        config = write_config(tmp_path, "codex", target.base_url, opt.base_url)
        out = tmp_path / "runs" / "limited"
        stopped = train(config, out)
        assert stopped.returncode == 1, stopped.stderr
        last = stopped.stderr.strip().splitlines()[-1]
        assert last.startswith("skillopt: error: models.target (codex:local-model): Codex usage")
        assert "try again at" in last and "resumable" in last
        assert json.loads((out / "state.json").read_text())["status"] == "failed"
        target.handler = brain  # the limit has reset
        resumed = train(config, out, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["best_val"] == pytest.approx(1.0)
