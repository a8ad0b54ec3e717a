"""Issue 35 done-when: a night on a project that commits symlinks out of itself (`/etc/hosts`
and `../victim`, as monorepos do) replays its agentic tasks with the REAL `claude` binary
(against a scripted brain on loopback, as tests/sleep/test_night_real_agent.py): the links
are left out of each copy and the trajectories say so. Before, every replay died with
tarfile's AbsoluteLinkError and the night failed."""

from __future__ import annotations

from pathlib import Path

from core.skills_repo import SkillsRepo
from tests.sleep.test_night_real_agent import SKILL_TEXT, agent_brain, git, real_claude_night
from tests.support.agent_clis import AGENT_TESTS
from tests.support.loopback_agent_servers import LoopbackMessagesSSE

pytestmark = AGENT_TESTS


def _held_text(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


async def test_a_night_replays_a_project_that_commits_symlinks_out_of_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLOPT_STATE_DIR", str(tmp_path / "ours"))
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "secret.txt").write_text("not the project's\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    (project / "package.json").write_text('{"name": "demo"}\n')
    (project / "hosts").symlink_to("/etc/hosts")
    (project / "victim").symlink_to("../victim")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("proj", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    with LoopbackMessagesSSE(agent_brain) as server:
        night = real_claude_night(tmp_path, project, repo, server)
        result = await night.run()
    assert result.status == "finished", result.message
    assert result.skills["proj"]["train"] == 2 and result.skills["proj"]["val"] == 2
    held = _held_text(night.folder)
    assert b"left out of the copy" in held and b"/etc/hosts" in held and b"../victim" in held
    assert b"not the project's" not in held
