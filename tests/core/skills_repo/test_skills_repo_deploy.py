from __future__ import annotations

import stat
from pathlib import Path

import pytest

from core.skills_repo import DeployTargetChanged, SkillsRepo, SkillsRepoError
from tests.support.skills_git import BASE_TEXT, SKILL, edit_lines

NEW = edit_lines(BASE_TEXT, {1: "line 1, sharper\n"})


def test_hand_edited_target_is_refused_with_the_difference(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    target.write_text(BASE_TEXT + "my own rule\n")
    main = repo.main_sha()
    with pytest.raises(DeployTargetChanged, match="changed outside skillopt") as err:
        repo.adopt("r")
    assert "+my own rule" in err.value.difference
    assert err.value.target == str(target)
    assert repo.main_sha() == main  # nothing happened
    assert target.read_text() == BASE_TEXT + "my own rule\n"
    repo.adopt("r", force=True)
    assert target.read_text() == NEW == repo.read_skill(SKILL)


def test_rollback_also_checks_the_target(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    repo.adopt("r")
    target.write_text("hand made\n")
    with pytest.raises(DeployTargetChanged):
        repo.rollback(SKILL)
    repo.rollback(SKILL, force=True)
    assert target.read_text() == BASE_TEXT


def test_missing_target_is_recreated_and_mode_kept(repo: SkillsRepo, target: Path):
    target.chmod(0o640)
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    repo.adopt("r")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    target.unlink()
    repo.rollback(SKILL)
    assert target.read_text() == BASE_TEXT


def test_first_deploy_compares_with_main(tmp_path: Path):
    """No deploy record yet (target existed before the skill was imported elsewhere)."""
    repo = SkillsRepo.init(tmp_path / "s")
    target = tmp_path / "live.md"
    target.write_text("live and different\n")
    with pytest.raises(DeployTargetChanged, match="already exists"):
        repo.add_skill("k", BASE_TEXT, deploy_to=str(target))
    assert repo.list_skills() == []
    target.write_text(BASE_TEXT)
    repo.add_skill("k", BASE_TEXT, deploy_to=str(target))  # same text: recorded, untouched
    (repo.git_dir / "skillopt" / "deployed.json").unlink()  # lost record: fall back to main
    repo.stage("k", "r", NEW, subject="s", trailers={})
    repo.adopt("r")
    assert target.read_text() == NEW


def test_tilde_targets_stay_portable_in_the_manifest(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    repo = SkillsRepo.init(tmp_path / "s")
    repo.add_skill("k", "x\n", deploy_to="~/.claude/skills/k/SKILL.md")
    assert repo.list_skills()[0].deploy_to == "~/.claude/skills/k/SKILL.md"
    assert (tmp_path / "home/.claude/skills/k/SKILL.md").read_text() == "x\n"


def test_a_failed_deploy_write_undoes_the_commit_at_once(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    main = repo.main_sha()
    target.unlink()
    target.parent.rmdir()
    target.parent.write_text("a file where the target's directory should be\n")
    with pytest.raises(SkillsRepoError, match="nothing was changed"):
        repo.adopt("r")
    assert repo.main_sha() == main
    assert (repo.path / SKILL / "SKILL.md").read_text() == BASE_TEXT
    assert not (repo.git_dir / "skillopt" / "journal.json").exists()
    assert [b.run_id for b in repo.staged_branches()] == ["r"]
