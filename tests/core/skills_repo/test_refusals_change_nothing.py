"""Issue 9, data loss in the skills repository: a refused `init` changes nothing, and a
crash mid-write leaves no temp file that recovery does not sweep."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.skills_repo import DirtyTree, SkillsRepo
from tests.support.skills_git import BASE_TEXT, SKILL, edit_lines, plain_git, run_python

NEW = edit_lines(BASE_TEXT, {1: "line 1, sharper\n", 12: "line 12, sharper\n"})


def test_refused_init_leaves_head_and_branches_as_they_were(tmp_path: Path):
    path = tmp_path / "project"
    path.mkdir()
    plain_git(path, "init", "-q", "-b", "work")
    (path / "notes.md").write_text("mine\n")
    plain_git(path, "add", "notes.md")
    plain_git(path, "commit", "-qm", "user commit")
    (path / "notes.md").write_text("half-typed\n")  # uncommitted
    refs_before = plain_git(path, "for-each-ref")
    with pytest.raises(DirtyTree, match="uncommitted changes"):
        SkillsRepo.init(path)
    assert plain_git(path, "symbolic-ref", "HEAD").strip() == "refs/heads/work"
    assert plain_git(path, "for-each-ref") == refs_before  # no new main
    assert (path / "notes.md").read_text() == "half-typed\n"


def _temp_files(*dirs: Path) -> list[str]:
    return sorted(p.name for d in dirs for p in d.glob(".*.tmp"))


@pytest.mark.parametrize("which", ["worktree", "deploy"])
def test_crash_mid_write_leaves_no_temp_file_after_recovery(
    repo: SkillsRepo, target: Path, which: str
):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    skill_dir = repo.path / SKILL
    # Die between writing a file's temp copy and renaming it into place: the work-tree file
    # is written first, then the deploy target (both are named SKILL.md).
    point = "write:before-rename:SKILL.md" + ("#2" if which == "deploy" else "")
    done = run_python(
        f"from core.skills_repo import SkillsRepo\nSkillsRepo.open({str(repo.path)!r}).adopt('r')\n",
        env={"SKILLOPT_CRASH_AT": point},
        timeout=60,
    )
    assert done.returncode == 86, done.stderr
    assert _temp_files(skill_dir, target.parent)  # the crash left one behind
    reopened = SkillsRepo.open(repo.path)
    assert reopened.recovered and "interrupted adopt" in reopened.recovered
    assert _temp_files(skill_dir, target.parent) == []
    assert plain_git(repo.path, "status", "--porcelain", "--untracked-files=all") == ""
    assert target.read_text() == BASE_TEXT == reopened.read_skill(SKILL)
    reopened.adopt("r", [1, 2])
    assert target.read_text() == NEW


def test_recovery_keeps_temp_like_files_that_are_not_ours(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    foreign = target.parent / ".SKILL.md.notes.tmp"  # not mkstemp's 8-character shape
    foreign.write_text("someone else's\n")
    done = run_python(
        f"from core.skills_repo import SkillsRepo\nSkillsRepo.open({str(repo.path)!r}).adopt('r')\n",
        env={"SKILLOPT_CRASH_AT": "adopt:after-refs"},
        timeout=60,
    )
    assert done.returncode == 86, done.stderr
    SkillsRepo.open(repo.path)
    assert foreign.read_text() == "someone else's\n"
