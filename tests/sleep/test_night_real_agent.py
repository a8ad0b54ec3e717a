"""A Sleep night whose target is the REAL `claude` binary (Claude Code 2.1.328) against a
scripted brain on loopback: each task is replayed as an agent run in a temporary copy of
the project's tree at the recorded commit, with the skill placed as the project's
CLAUDE.md; the judge and the optimizer are the scripted TEST DOUBLE
(tests/sleep/night_double.py). The brain answers with pnpm only when the CLAUDE.md it was
sent says to use pnpm, so the night learns the rule, gates it and stages it."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

from core.config import config_from_dict
from core.models.agents.process import AGENTS_BIN, recorded_sessions
from core.skills_repo import SkillsRepo
from sleep.night.held_tasks import Harvested
from sleep.night.run import Night
from tests.sleep.night_double import INSTALL_PROMPT, RULE, parts_for
from tests.support.agent_clis import AGENT_TESTS
from tests.support.loopback_agent_servers import LoopbackMessagesSSE, Reply

pytestmark = AGENT_TESTS
SKILL_TEXT = "# Project notes\n\nKeep answers short.\n"
BRAIN = "tests.sleep.night_double:brain"


def agent_brain(record) -> Reply:
    """What the real agent sent holds the CLAUDE.md of its workspace; the user's prompt
    never mentions pnpm, so only the skill can teach it."""
    sent = json.dumps(record.body)
    return Reply("Run `pnpm install`." if "pnpm" in sent else "Run `npm install`.")


def git(project: Path, *args: str) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(project.parent), "PATH": "/usr/bin:/bin"}
    ident = ["-c", "user.name=Dev", "-c", "user.email=dev@example.com"]
    return subprocess.run(["git", "-C", str(project), *ident, *args], env=env, check=True,
                          capture_output=True, text=True).stdout  # fmt: skip


def real_claude_night(tmp_path: Path, project: Path, repo: SkillsRepo, server) -> Night:
    """A night over four install sessions in `project` (two held out), the REAL claude the
    target (its brain `server`), the other roles the scripted TEST DOUBLE."""
    sessions = [
        {"source": "claude", "session_id": f"s{i}", "cwd": str(project), "branch": "main",
         "file": f"/x/{i}.jsonl", "automation": False,
         "tasks": [{"text": INSTALL_PROMPT.format(part=part), "timestamp": None, "aborted": False},
                   {"text": "no, use pnpm instead of npm", "timestamp": None, "aborted": False}]}
        for i, part in enumerate(parts_for(project, 4))
    ]  # fmt: skip
    roles = {r: {"backend": "scripted", "model": BRAIN} for r in ("optimizer", "judge", "miner")}
    roles["target"] = {
        "backend": "claude_code", "base_url": server.base_url,
        "binary": str(AGENTS_BIN / "claude"), "skill_placement": "claude_md",
        "timeout_s": 90.0, "max_retries": 1,
    }  # fmt: skip
    config = config_from_dict({
        "models": roles,
        "train": {"epochs": 1, "strategy": "llm", "gate": {"metric": "soft"},
                  "schedule": {"kind": "constant", "start": 2, "end": 2},
                  "slow_update": {"enabled": False}, "meta_skill": {"enabled": False}},
    })  # fmt: skip
    return Night(
        state_dir=tmp_path / "state", repo=repo, config=config, harvest=lambda _freeze: Harvested(sessions),
        project=project, today=dt.date(2026, 12, 1),
        min_val_tasks=2,  # parts_for(project, 4): two held-out tasks
    )  # fmt: skip


async def test_a_night_replays_with_the_real_claude_in_a_copy_of_the_project(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLOPT_STATE_DIR", str(tmp_path / "ours"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    (project / "package.json").write_text('{"name": "demo"}\n')
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    head = git(project, "rev-parse", "HEAD").strip()
    (project / "uncommitted.txt").write_text("work in progress\n")  # must stay out of replays
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("proj", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    with LoopbackMessagesSSE(agent_brain) as server:
        night = real_claude_night(tmp_path, project, repo, server)
        result = await night.run()
        sent = [json.dumps(r.body) for r in server.requests if isinstance(r.body, dict)]
    assert result.status == "finished", result.message
    outcome = result.skills["proj"]
    assert outcome["train"] == 2 and outcome["val"] == 2
    assert outcome["baseline_val"] < outcome["best_val"]
    [branch] = repo.staged_branches()
    assert RULE in repo.git.blob(branch.head, repo.entry("proj").path).decode()
    # The skill reached the real agent as its CLAUDE.md: the gate's runs carried the rule.
    assert any(RULE in s for s in sent) and any("Keep answers short." in s for s in sent)
    assert not any("work in progress" in s for s in sent)
    # Replays ran on the recorded commit's tree, never in the user's checkout.
    assert json.loads((night.folder / "replay.json").read_text())["commit"] == head
    assert (project / "CLAUDE.md").read_text() == SKILL_TEXT
    assert git(project, "status", "--porcelain").strip() == "?? uncommitted.txt"
    # The agent sessions the night started are recorded, so a later harvest skips them.
    assert len(recorded_sessions()) >= 6  # baseline 2 + train 2 + gate 2 agent runs
