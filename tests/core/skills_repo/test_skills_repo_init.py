from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from core.skills_repo import SkillEntry, SkillsRepo, SkillsRepoError
from tests.support.skills_git import SKILL, plain_git


def test_init_creates_main_with_manifest_and_is_idempotent(tmp_path: Path):
    repo = SkillsRepo.init(tmp_path / "new dir é")
    assert plain_git(repo.path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    manifest = yaml.safe_load((repo.path / "skills.yaml").read_text())
    assert manifest == {"version": 1, "skills": []}
    first = repo.main_sha()
    again = SkillsRepo.init(repo.path)
    assert again.main_sha() == first
    assert [e.kind for e in again.log()] == ["init"]
    assert plain_git(repo.path, "status", "--porcelain") == ""


def test_init_adopts_an_existing_repo_on_another_branch(tmp_path: Path):
    path = tmp_path / "existing"
    path.mkdir()
    plain_git(path, "init", "-q", "-b", "master")
    (path / "notes.md").write_text("mine\n")
    plain_git(path, "add", "notes.md")
    plain_git(path, "commit", "-qm", "user commit")
    user_commit = plain_git(path, "rev-parse", "HEAD").strip()
    repo = SkillsRepo.init(path)
    assert plain_git(path, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert plain_git(path, "rev-parse", "main~1").strip() == user_commit
    assert (path / "notes.md").read_text() == "mine\n"
    assert repo.list_skills() == []


def test_init_nested_inside_another_repo_makes_its_own(tmp_path: Path):
    outer = tmp_path / "project"
    outer.mkdir()
    plain_git(outer, "init", "-q", "-b", "main")
    repo = SkillsRepo.init(outer / "skills")
    assert repo.path == outer / "skills"
    assert (outer / "skills" / ".git").is_dir()


def test_open_refuses_what_is_not_a_skills_repo(tmp_path: Path):
    with pytest.raises(SkillsRepoError, match="skillopt init"):
        SkillsRepo.open(tmp_path)
    plain = tmp_path / "plain"
    plain.mkdir()
    plain_git(plain, "init", "-q", "-b", "main")
    with pytest.raises(SkillsRepoError, match="skillopt init"):
        SkillsRepo.open(plain)


def test_identity_is_configurable_and_remembered(tmp_path: Path):
    repo = SkillsRepo.init(tmp_path / "s", identity=("Ada Lovelace", "ada@example.com"))
    repo.add_skill("x", "text\n")
    reopened = SkillsRepo.open(tmp_path / "s")
    reopened.stage("x", "r1", "text 2\n", subject="s", trailers={"Step": "1"})
    authors = {e.author for e in reopened.log()}
    assert authors == {"Ada Lovelace <ada@example.com>"}
    assert plain_git(repo.path, "log", "-1", "--format=%cn", "staged/r1").strip() == "Ada Lovelace"


def test_add_skill_writes_manifest_file_and_target(repo: SkillsRepo, tmp_path: Path):
    entries = repo.list_skills()
    assert entries == [SkillEntry(SKILL, f"{SKILL}/SKILL.md", str(tmp_path / "deployed/SKILL.md"))]
    assert repo.read_skill(SKILL) == (repo.path / SKILL / "SKILL.md").read_text()
    assert (tmp_path / "deployed/SKILL.md").read_bytes() == (
        repo.path / SKILL / "SKILL.md"
    ).read_bytes()
    record = json.loads((repo.git_dir / "skillopt" / "deployed.json").read_text())
    assert record[SKILL]["target"] == str(tmp_path / "deployed/SKILL.md")
    with pytest.raises(SkillsRepoError, match="already exists"):
        repo.add_skill(SKILL, "other\n")
    with pytest.raises(SkillsRepoError, match="bad skill name"):
        repo.add_skill("../escape", "x\n")
    with pytest.raises(SkillsRepoError, match="bad skill path"):
        repo.add_skill("ok", "x\n", path="../outside.md")
    with pytest.raises(SkillsRepoError, match="unknown skill"):
        repo.read_skill("nope")
    with pytest.raises(SkillsRepoError, match="inside the skills repo"):
        repo.add_skill("loop", "x\n", deploy_to=str(repo.path / "CLAUDE.md"))


def test_users_hostile_git_config_changes_nothing(repo: SkillsRepo, tmp_path: Path):
    """Hooks that fail, signing without a key, autocrlf, colour, odd diff settings and a
    hostile editor in the repo's own config: our operations neither break nor change."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "commit-msg", "post-commit", "reference-transaction"):
        (hooks / hook).write_text("#!/bin/sh\nexit 1\n")
        (hooks / hook).chmod(0o755)
    for key, value in {
        "core.hooksPath": str(hooks),
        "commit.gpgsign": "true",
        "user.signingkey": "DEADBEEF",
        "core.autocrlf": "true",
        "color.ui": "always",
        "color.diff": "always",
        "diff.noprefix": "true",
        "diff.algorithm": "patience",
        "diff.context": "9",
        "core.editor": "false",
        "core.quotepath": "true",
        "log.showSignature": "true",
    }.items():
        plain_git(repo.path, "config", key, value)
    text = "line 1\r\nLINE 2\r\nline 3"
    repo.stage(SKILL, "hostile", text, subject="s", trailers={"Step": "1"})
    diff = repo.diff("hostile")
    assert diff.hunks and all(not h.header.startswith("\x1b") for h in diff.hunks)
    repo.adopt("hostile")
    assert (repo.path / SKILL / "SKILL.md").read_bytes() == text.encode()
    assert repo.read_skill(SKILL) == text
