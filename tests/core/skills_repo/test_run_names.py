"""The staged branch's id of a training run (core/skills_repo/run_names.py), on a real
skills repository: a name that says nothing takes its parent's, a taken one too, then a
number (fails on the old code: every `--out …/run` staged on `staged/run`)."""

from __future__ import annotations

from core.run.staging import StagedCandidate
from core.skills_repo import SkillsRepo
from core.skills_repo.repo_stager import SkillsRepoStager
from core.skills_repo.run_names import new_staging_id


def stage(repo: SkillsRepo, run_id: str) -> None:
    SkillsRepoStager(repo, "notes", run_id).stage(
        StagedCandidate(run_id=run_id, step=0, skill_text=f"# Notes\n\n{run_id}\n",
                        val_before=0.0, val_after=1.0, items_improved=1, items_regressed=0)
    )  # fmt: skip


def test_generic_taken_and_distinct_names(tmp_path):
    repo = SkillsRepo.init(tmp_path / "skills", identity=("T", "t@example.com"))
    repo.add_skill("notes", "# Notes\n")
    assert new_staging_id(repo, tmp_path / "exp1" / "run") == "exp1-run"
    assert new_staging_id(repo, tmp_path / "runs" / "capitals-20261202-0100") == (
        "capitals-20261202-0100"
    )
    assert new_staging_id(repo, tmp_path / "my exp" / "Output") == "my-exp-Output"
    stage(repo, "capitals-a")
    assert new_staging_id(repo, tmp_path / "b" / "capitals-a") == "b-capitals-a"
    stage(repo, "b-capitals-a")
    repo.reject("staged/b-capitals-a")  # an archived branch holds its name too
    assert new_staging_id(repo, tmp_path / "b" / "capitals-a") == "b-capitals-a-2"
