"""A Sleep night whose target is the REAL `pi` binary (pi 0.73.1) against a scripted brain
on loopback (issue 23): each task is replayed as a pi agent run in a temporary copy of the
project's tree at the recorded commit, with the skill as the project's AGENTS.md (pi reads
it); the judge and the optimizer are the scripted TEST DOUBLE (tests/sleep/night_double.py).
The brain answers with pnpm only when the AGENTS.md pi sent says to use pnpm, so the night
learns the rule, gates it and stages it."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from core.config import config_from_dict
from core.models.agents.process import AGENTS_BIN
from core.skills_repo import SkillsRepo
from sleep.night.held_tasks import Harvested
from sleep.night.run import Night
from tests.sleep.night_double import INSTALL_PROMPT, RULE, parts_for
from tests.sleep.test_night_real_agent import BRAIN, SKILL_TEXT, agent_brain, git
from tests.support.loopback_agent_servers import LoopbackMessagesSSE

pytestmark = [
    pytest.mark.agents,
    pytest.mark.skipif(
        not (AGENTS_BIN / "pi").exists(), reason="pi is not installed: run `make agents`"
    ),
]


async def test_a_night_with_the_real_pi_as_target_stages_a_gated_rule(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLOPT_STATE_DIR", str(tmp_path / "ours"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(SKILL_TEXT)
    (project / "package.json").write_text('{"name": "demo"}\n')
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("proj", SKILL_TEXT, deploy_to=str(project / "AGENTS.md"))
    # Sessions of an AGENTS.md reader (Codex's transcripts), replayed by pi.
    sessions = [
        {"source": "codex", "session_id": f"s{i}", "cwd": str(project), "branch": "main",
         "file": f"/x/{i}.jsonl", "automation": False,
         "tasks": [{"text": INSTALL_PROMPT.format(part=part), "timestamp": None, "aborted": False},
                   {"text": "no, use pnpm instead of npm", "timestamp": None, "aborted": False}]}
        for i, part in enumerate(parts_for(project, 4))
    ]  # fmt: skip
    with LoopbackMessagesSSE(agent_brain) as server:
        roles = {
            r: {"backend": "scripted", "model": BRAIN} for r in ("optimizer", "judge", "miner")
        }
        roles["target"] = {
            "backend": "pi", "base_url": server.base_url, "model": "anthropic/claude-sonnet-4-5",
            "binary": str(AGENTS_BIN / "pi"), "timeout_s": 90.0, "max_retries": 1,
        }  # fmt: skip
        config = config_from_dict({
            "models": roles,
            "train": {"epochs": 1, "strategy": "llm", "gate": {"metric": "soft"},
                      "schedule": {"kind": "constant", "start": 2, "end": 2},
                      "slow_update": {"enabled": False}, "meta_skill": {"enabled": False}},
        })  # fmt: skip
        night = Night(
            state_dir=tmp_path / "state", repo=repo, config=config, harvest=lambda _freeze: Harvested(sessions),
            project=project, today=dt.date(2026, 12, 1),
            min_val_tasks=2,  # parts_for: two held-out tasks, not the default six
        )  # fmt: skip
        result = await night.run()
        sent = [json.dumps(r.body) for r in server.requests if isinstance(r.body, dict)]
    assert result.status == "finished", result.message
    outcome = result.skills["proj"]
    assert outcome["train"] == 2 and outcome["val"] == 2
    assert outcome["baseline_val"] < outcome["best_val"]
    [branch] = repo.staged_branches()
    assert RULE in repo.git.blob(branch.head, repo.entry("proj").path).decode()
    # The skill reached pi as its AGENTS.md: the gate's runs carried the rule.
    assert any(RULE in s for s in sent) and any("Keep answers short." in s for s in sent)
    assert (project / "AGENTS.md").read_text() == SKILL_TEXT
    assert git(project, "status", "--porcelain").strip() == ""
