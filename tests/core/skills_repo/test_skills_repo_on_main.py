"""Review marks the hunks main already holds (after a partial adopt, or the same edit made on
main by hand), by the same test adopt uses to say "already on main"."""

from __future__ import annotations

import pytest

from core.skills_repo import SkillsRepo, SkillsRepoError
from tests.support.skills_git import BASE_TEXT, SKILL, edit_lines, plain_git

TWO = edit_lines(BASE_TEXT, {1: "line 1, sharper\n", 12: "line 12, sharper\n"})


def _stage(repo: SkillsRepo, text: str) -> None:
    repo.stage(SKILL, "run-1", text, subject="step 1", trailers={"Step": "1"})


def test_fresh_branch_has_nothing_on_main(repo: SkillsRepo):
    _stage(repo, TWO)
    diff = repo.diff("staged/run-1")
    assert [h.on_main for h in diff.hunks] == [False, False]


def test_partial_adopt_marks_adopted_hunks_on_main(repo: SkillsRepo):
    _stage(repo, TWO)
    assert len(repo.diff("staged/run-1").hunks) == 2
    repo.adopt("staged/run-1", [1])
    diff = repo.diff("staged/run-1")
    assert [(h.index, h.on_main) for h in diff.hunks] == [(1, True), (2, False)]
    # adopt agrees: the marked ones alone are a no-op, the other one is not
    with pytest.raises(SkillsRepoError, match="already on main"):
        repo.adopt("staged/run-1", [1])
    repo.adopt("staged/run-1", [2])
    assert repo.read_skill(SKILL) == TWO


def test_same_edit_made_on_main_by_hand_is_on_main(repo: SkillsRepo):
    _stage(repo, TWO)
    path = repo.path / SKILL / "SKILL.md"
    path.write_text(edit_lines(BASE_TEXT, {12: "line 12, sharper\n"}))
    plain_git(repo.path, "commit", "-qam", "hand edit")
    diff = repo.diff("staged/run-1")
    assert [h.on_main for h in diff.hunks] == [False, True]


def test_a_different_edit_on_main_is_not_on_main(repo: SkillsRepo):
    _stage(repo, TWO)
    path = repo.path / SKILL / "SKILL.md"
    path.write_text(edit_lines(BASE_TEXT, {12: "line 12, otherwise\n"}))
    plain_git(repo.path, "commit", "-qam", "hand edit")
    diff = repo.diff("staged/run-1")
    assert [h.on_main for h in diff.hunks] == [False, False]
