"""Rolling back some hunks of an adoption (`rollback(hunks=)`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo, SkillsRepoError
from tests.support.skills_git import BASE_TEXT, SKILL


def test_rollback_one_hunk_of_an_adoption(repo: SkillsRepo, target: Path):
    two_hunks = BASE_TEXT.replace("line 1\n", "line 1, sharper\n").replace(
        "line 12\n", "line 12, sharper\n"
    )
    repo.stage(SKILL, "r1", two_hunks, subject="s", trailers={"Step": "1"})
    adoption = repo.adopt("r1").commit
    assert [h.index for h in repo.adoption_hunks(adoption)] == [1, 2]
    repo.rollback(adoption, hunks=[2])
    assert repo.read_skill(SKILL) == BASE_TEXT.replace("line 1\n", "line 1, sharper\n")
    assert target.read_text() == repo.read_skill(SKILL)
    entry = repo.log(SKILL)[0]
    assert (entry.kind, entry.trailers["Hunks"], entry.trailers["Reverts"]) == (
        "rollback",
        "2",
        adoption,
    )
    with pytest.raises(SkillsRepoError, match="would change nothing"):
        repo.rollback(adoption, hunks=[2])
    with pytest.raises(SkillsRepoError, match="no hunk 3"):
        repo.rollback(adoption, hunks=[3])
    repo.rollback(SKILL)  # the adoption is still live for its other hunk: full rollback
    assert repo.read_skill(SKILL) == BASE_TEXT
