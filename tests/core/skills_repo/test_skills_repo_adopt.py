from __future__ import annotations

from pathlib import Path

import pytest

from core.run.staging import StagedCandidate
from core.skills_repo import AdoptConflict, SkillsRepo, SkillsRepoError, SkillsRepoStager
from tests.support.skills_git import BASE_TEXT, SKILL, edit_lines, plain_git

TOP_AND_BOTTOM = edit_lines(BASE_TEXT, {1: "line 1, sharper\n", 12: "line 12, sharper\n"})


def stage(repo: SkillsRepo, text: str, run: str = "run-1", step: int = 1) -> str:
    return repo.stage(SKILL, run, text, subject=f"step {step}", trailers={"Step": str(step)})


def test_stage_diff_adopt_some_hunks(repo: SkillsRepo, target: Path):
    stage(repo, edit_lines(BASE_TEXT, {1: "line 1, sharper\n"}), step=1)
    stage(repo, TOP_AND_BOTTOM, step=2)
    [branch] = repo.staged_branches()
    assert (branch.name, branch.run_id, branch.skill, branch.commits) == (
        "staged/run-1",
        "run-1",
        SKILL,
        2,
    )
    diff = repo.diff("staged/run-1")
    assert [h.index for h in diff.hunks] == [1, 2]
    assert tuple(diff.hunks[0].lines[:2]) == ("-line 1", "+line 1, sharper")
    assert diff.hunks[1].lines[-2:] == ["-line 12", "+line 12, sharper"]
    assert [(h.added, h.removed) for h in diff.hunks] == [(1, 1), (1, 1)]
    assert [e.subject for e in diff.evidence] == ["step 1", "step 2"]

    result = repo.adopt("staged/run-1", [2])
    expected = edit_lines(BASE_TEXT, {12: "line 12, sharper\n"})
    assert repo.read_skill(SKILL) == expected
    assert (repo.path / SKILL / "SKILL.md").read_text() == expected
    assert target.read_text() == expected
    assert result.deployed_to == str(target) and result.archived_as is None
    [entry] = [e for e in repo.log(SKILL) if e.sha == result.commit]
    assert entry.kind == "adopt"
    assert entry.trailers["Adopted-From"] == f"staged/run-1 {branch.head}"
    assert entry.trailers["Hunks"] == "2"
    assert plain_git(repo.path, "status", "--porcelain") == ""
    # the rest later: main moved (by our own adoption) but hunk 1 still merges cleanly
    result = repo.adopt("run-1", [1])
    assert repo.read_skill(SKILL) == TOP_AND_BOTTOM == target.read_text()
    assert result.archived_as == "adopted/run-1" and repo.staged_branches() == []


def test_adopt_all_archives_the_branch(repo: SkillsRepo, target: Path):
    head = stage(repo, TOP_AND_BOTTOM)
    result = repo.adopt("run-1")
    assert result.hunks == [1, 2] and result.archived_as == "adopted/run-1"
    assert repo.read_skill(SKILL) == TOP_AND_BOTTOM == target.read_text()
    assert plain_git(repo.path, "rev-parse", "adopted/run-1").strip() == head
    assert repo.staged_branches() == []
    main_commits = plain_git(repo.path, "rev-list", "main").split()
    assert head not in main_commits  # adoption is one new commit, not a merge


def test_stage_is_idempotent_per_step_and_never_touches_the_checkout(repo: SkillsRepo):
    (repo.path / "scratch.txt").write_text("untracked, user's\n")
    first = stage(repo, TOP_AND_BOTTOM, step=1)
    again = stage(repo, "something else entirely\n", step=1)
    assert again == first
    second = stage(repo, BASE_TEXT + "more\n", step=2)
    assert second != first
    assert repo.staged_branches()[0].commits == 2
    assert (repo.path / SKILL / "SKILL.md").read_text() == BASE_TEXT
    assert plain_git(repo.path, "status", "--porcelain") == "?? scratch.txt\n"


def test_git_stager_writes_evidence_trailers_and_rationales(repo: SkillsRepo):
    base = repo.main_sha()
    repo.add_skill("other", "x\n")  # main moves after the run started
    stager = SkillsRepoStager(repo, SKILL, "run-7", base=base)
    candidate = StagedCandidate(
        run_id="run-7",
        step=3,
        skill_text=TOP_AND_BOTTOM,
        val_before=0.5,
        val_after=0.625,
        items_improved=4,
        items_regressed=1,
        edits=[{"op": "replace", "rationale": "be sharper"}, {"op": "append", "rationale": ""}],
        summary="Sharper first and last lines",
        val_items=8,
    )
    sha = stager.stage(candidate)
    assert stager.stage(candidate) == sha  # resumed run
    [evidence] = repo.diff("staged/run-7").evidence
    assert evidence.subject == "Sharper first and last lines"
    assert evidence.trailers == {
        "Run-Id": "run-7",
        "Step": "3",
        "Source": "step",
        "Val-Before": "0.5000",
        "Val-After": "0.6250",
        "Items-Improved": "4",
        "Items-Regressed": "1",
        "Val-Items": "8",
        "Evidence": "p=0.375",  # 4 up, 1 down: 2 * (1 + 5) / 32
        "Edits": "2",
        "Skill": SKILL,
    }
    assert "1. replace: be sharper" in evidence.body
    assert "2. append: (no rationale given)" in evidence.body
    assert repo.staged_branches()[0].base == base
    assert plain_git(repo.path, "rev-parse", f"{sha}~1").strip() == base


def test_git_stager_dedupes_on_step_and_source(repo: SkillsRepo):
    """A step's candidate and the slow update staged at the same step are two commits;
    staging either again (a resumed run) returns its own commit."""
    stager = SkillsRepoStager(repo, SKILL, "run-8")
    legacy = repo.stage(
        SKILL, "run-8", BASE_TEXT + "legacy\n", subject="before Source", trailers={"Step": "2"}
    )  # staged before the Source trailer existed

    def candidate(step: int, text: str, source: str) -> StagedCandidate:
        return StagedCandidate(
            run_id="run-8",
            step=step,
            skill_text=text,
            val_before=0.5,
            val_after=0.75,
            items_improved=1,
            items_regressed=0,
            source=source,
        )

    step = stager.stage(candidate(3, TOP_AND_BOTTOM, "step"))
    slow = stager.stage(candidate(3, TOP_AND_BOTTOM + "guidance\n", "slow_update"))
    assert slow != step
    assert stager.stage(candidate(3, TOP_AND_BOTTOM, "step")) == step
    assert stager.stage(candidate(3, TOP_AND_BOTTOM + "guidance\n", "slow_update")) == slow
    assert stager.stage(candidate(2, BASE_TEXT + "legacy\n", "step")) == legacy
    assert repo.staged_branches()[0].commits == 3
    [*_, evidence] = repo.diff("staged/run-8").evidence
    assert evidence.trailers["Source"] == "slow_update"


def test_git_stager_reuses_an_archived_run_id_only_when_told(repo: SkillsRepo):
    first = stage(repo, TOP_AND_BOTTOM, run="run-9", step=0)
    assert repo.reject("staged/run-9") == "rejected/run-9"
    candidate = StagedCandidate(
        run_id="run-9",
        step=0,
        skill_text=TOP_AND_BOTTOM,
        val_before=0.0,
        val_after=0.5,
        items_improved=1,
        items_regressed=0,
    )
    with pytest.raises(SkillsRepoError, match="already rejected"):
        SkillsRepoStager(repo, SKILL, "run-9").stage(candidate)
    fresh = SkillsRepoStager(repo, SKILL, "run-9", reuse_run_id=True).stage(candidate)
    assert fresh != first and repo.staged_branches()[0].head == fresh
    assert repo.reject("staged/run-9") == "rejected/run-9-2"


def test_reject_moves_branch_and_keeps_it(repo: SkillsRepo):
    head = stage(repo, TOP_AND_BOTTOM)
    assert repo.reject("staged/run-1") == "rejected/run-1"
    assert repo.staged_branches() == []
    assert plain_git(repo.path, "rev-parse", "rejected/run-1").strip() == head
    with pytest.raises(SkillsRepoError, match="already rejected"):
        stage(repo, TOP_AND_BOTTOM)
    repo.stage(SKILL, "run-2", TOP_AND_BOTTOM, subject="x", trailers={})
    with pytest.raises(SkillsRepoError, match="no staged branch"):
        repo.reject("run-1")


def test_rollback_restores_byte_identical_content(repo: SkillsRepo, target: Path):
    before_main = repo.read_skill(SKILL).encode()
    before_target = target.read_bytes()
    stage(repo, TOP_AND_BOTTOM)
    adoption = repo.adopt("run-1").commit
    revert = repo.rollback(SKILL)
    assert repo.read_skill(SKILL).encode() == before_main
    assert (repo.path / SKILL / "SKILL.md").read_bytes() == before_main
    assert target.read_bytes() == before_target
    [entry] = [e for e in repo.log(SKILL) if e.sha == revert]
    assert entry.kind == "rollback" and entry.trailers["Reverts"] == adoption
    assert entry.subject == f'Revert "Adopt {SKILL} from staged/run-1"'
    with pytest.raises(SkillsRepoError, match="no adoption"):
        repo.rollback(SKILL)
    with pytest.raises(SkillsRepoError, match="already rolled back"):
        repo.rollback(adoption)
    assert plain_git(repo.path, "status", "--porcelain") == ""


def test_rollback_of_an_older_adoption_by_commit(repo: SkillsRepo):
    stage(repo, edit_lines(BASE_TEXT, {1: "first\n"}), run="a")
    first = repo.adopt("a").commit
    stage(repo, edit_lines(repo.read_skill(SKILL), {12: "last\n"}), run="b")
    repo.adopt("b")
    repo.rollback(first)
    assert repo.read_skill(SKILL) == edit_lines(BASE_TEXT, {12: "last\n"})
    with pytest.raises(SkillsRepoError, match="not an adoption"):
        repo.rollback(repo.log()[-1].sha)


def test_adopt_after_main_moved_clean_merge(repo: SkillsRepo):
    stage(repo, TOP_AND_BOTTOM)
    hand = edit_lines(BASE_TEXT, {6: "line 6, edited on main\n"})
    (repo.path / SKILL / "SKILL.md").write_text(hand)
    plain_git(repo.path, "commit", "-qam", "hand edit on main")
    repo.adopt("run-1")
    assert repo.read_skill(SKILL) == edit_lines(TOP_AND_BOTTOM, {6: "line 6, edited on main\n"})


def test_adopt_after_main_moved_conflict_names_the_hunk(repo: SkillsRepo, target: Path):
    stage(repo, TOP_AND_BOTTOM)
    hand = edit_lines(BASE_TEXT, {12: "line 12, edited on main\n"})
    (repo.path / SKILL / "SKILL.md").write_text(hand)
    plain_git(repo.path, "commit", "-qam", "hand edit on main")
    main = repo.main_sha()
    with pytest.raises(AdoptConflict, match="hunk 2 conflicts") as err:
        repo.adopt("run-1")
    assert err.value.hunks == [2]
    assert repo.main_sha() == main and repo.read_skill(SKILL) == hand
    repo.adopt("run-1", [1])  # the clean hunk still goes in
    assert repo.read_skill(SKILL) == edit_lines(hand, {1: "line 1, sharper\n"})


def test_bad_hunk_choices_are_refused(repo: SkillsRepo):
    stage(repo, TOP_AND_BOTTOM)
    with pytest.raises(SkillsRepoError, match="no hunk 3"):
        repo.adopt("run-1", [3])
    with pytest.raises(SkillsRepoError, match="none chosen"):
        repo.adopt("run-1", [])
    repo.adopt("run-1", [1])
    with pytest.raises(SkillsRepoError, match="already on main"):
        repo.adopt("run-1", [1])


def test_show_gives_the_commit_diff(repo: SkillsRepo):
    stage(repo, TOP_AND_BOTTOM)
    sha = repo.adopt("run-1").commit
    text = repo.show(sha)
    assert text.startswith("diff --git") and "+line 12, sharper" in text


def test_staging_a_candidate_identical_to_its_parent_is_refused(tmp_path):
    from core.skills_repo import SkillsRepo, SkillsRepoError

    repo = SkillsRepo.init(tmp_path / "repo")
    repo.add_skill("s", "Answer.\n")
    with pytest.raises(SkillsRepoError, match="nothing to stage.*identical to main"):
        repo.stage("s", "r1", "Answer.\n", subject="same", trailers={"Step": "0"})
    assert repo.staged_branches() == []
    repo.stage("s", "r1", "Answer briefly.\n", subject="new", trailers={"Step": "0"})
    with pytest.raises(SkillsRepoError, match="identical to staged/r1"):
        repo.stage("s", "r1", "Answer briefly.\n", subject="same", trailers={"Step": "1"})
