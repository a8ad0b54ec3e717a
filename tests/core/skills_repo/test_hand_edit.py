"""A hand edit is made on the head it was read from: a step staged meanwhile is never
overwritten; a hunk that only removes lines is edited as its new side (its context), and
an editor that drops the last newline does not join two lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo, SkillsRepoError
from tests.support.tui_app import IDENTITY, SKILL_V1, SKILL_V2, make_skills_repo

BRANCH = "staged/demo-finished"


def test_edit_refused_when_the_branch_moved_meanwhile(tmp_path: Path) -> None:
    repo = make_skills_repo(tmp_path / "skills")
    target = repo.edit_target(BRANCH)
    newer = repo.stage(
        "quiz", "demo-finished", SKILL_V2 + "- new rule\n", subject="step 4", trailers={"Step": "4"}
    )
    with pytest.raises(SkillsRepoError, match="changed while it was being edited"):
        repo.stage_edit(target, target.text.replace(b"Pacific", b"Arctic"))
    assert repo.git.rev("refs/heads/" + BRANCH) == newer


def test_a_removal_hunk_is_edited_as_its_new_side(tmp_path: Path) -> None:
    repo = SkillsRepo.init(tmp_path / "skills", identity=IDENTITY)
    repo.add_skill("quiz", SKILL_V1)
    repo.stage(
        "quiz",
        "cut",
        SKILL_V1.replace("- Use plain text.\n", ""),
        subject="cut",
        trailers={"Step": "1"},
    )
    target = repo.edit_target("staged/cut", 1)
    hunk = repo.diff("staged/cut").hunks[0]
    new_side = "".join(line[1:] + "\n" for line in hunk.lines if line[:1] in " +")
    assert target.region.decode() == new_side
    edited = new_side.replace(
        "- Keep answers short.\n", "- Keep answers short.\n- Use plain text, always.\n"
    ).rstrip("\n")  # as some editors save it
    sha = repo.stage_edit(target, edited.encode())
    assert sha is not None
    text = repo.git.blob(sha, "quiz/SKILL.md").decode()
    assert text == SKILL_V1.replace("- Use plain text.\n", "- Use plain text, always.\n")
