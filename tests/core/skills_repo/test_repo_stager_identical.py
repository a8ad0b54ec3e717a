"""A second run proposing exactly the text another run already staged does not open a
second branch for the same review (issue 10: `n` twice with one config staged twice)."""

from __future__ import annotations

from core.run.staging import StagedCandidate
from core.skills_repo import SkillsRepo, SkillsRepoStager
from tests.support.skills_git import BASE_TEXT, SKILL

CANDIDATE = BASE_TEXT.replace("line 3\n", "line 3, sharper\n")


def _candidate(run_id: str, text: str = CANDIDATE) -> StagedCandidate:
    return StagedCandidate(run_id, 1, text, 0.4, 0.8, 2, 0, summary="step 1")


def test_identical_candidate_is_not_staged_again(repo: SkillsRepo):
    first = SkillsRepoStager(repo, SKILL, "run-a").stage(_candidate("run-a"))
    again = SkillsRepoStager(repo, SKILL, "run-b").stage(_candidate("run-b"))
    assert again == first
    assert [b.run_id for b in repo.staged_branches()] == ["run-a"]
    other = SkillsRepoStager(repo, SKILL, "run-c").stage(_candidate("run-c", BASE_TEXT + "x\n"))
    assert other != first
    assert [b.run_id for b in repo.staged_branches()] == ["run-a", "run-c"]
