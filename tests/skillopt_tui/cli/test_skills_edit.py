"""`skillopt skills edit BRANCH [--hunk N]`: the staged candidate (or one hunk) through
$EDITOR, staged again on the same branch as a commit marked `Edited: by hand`. Real git
repo, the real console script, a scripted editor (a test double for a person)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.skills_repo import SkillsRepo
from tests.support.scripted_editor import scripted_editor, seen
from tests.support.tui_app import SKILL_V2, make_skills_repo

SKILLOPT = Path(sys.executable).parent / "skillopt"
BRANCH = "staged/demo-finished"


def _edit(repo: Path, editor: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "EDITOR": editor, "VISUAL": ""}
    return subprocess.run(
        [str(SKILLOPT), "skills", "edit", BRANCH, *extra, "--repo", str(repo)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def _head(repo: SkillsRepo) -> str:
    return repo.git.rev("refs/heads/" + BRANCH)


def test_edit_whole_candidate_stages_a_commit_marked_by_hand(tmp_path: Path) -> None:
    repo = make_skills_repo(tmp_path / "skills")
    before = _head(repo)
    editor = scripted_editor(
        tmp_path / "ed", replace=[("largest ocean: Pacific", "largest ocean: the Pacific")]
    )
    done = _edit(tmp_path / "skills", editor)
    assert done.returncode == 0, done.stderr
    assert seen(tmp_path / "ed") == SKILL_V2  # the editor got the whole candidate
    head = _head(repo)
    assert head != before and repo.git.line("rev-parse", f"{head}^") == before
    evidence = repo.diff(BRANCH).evidence[-1]
    assert evidence.trailers["Edited"] == "by hand"
    assert evidence.trailers["Skill"] == "quiz"
    text = repo.git.blob(head, "quiz/SKILL.md").decode()
    assert text == SKILL_V2.replace("ocean: Pacific", "ocean: the Pacific")
    assert head[:12] in done.stdout and "Edited: by hand" in done.stdout


def test_edit_one_hunk_gives_the_editor_that_hunk_and_keeps_the_rest(tmp_path: Path) -> None:
    repo = make_skills_repo(tmp_path / "skills")
    hunk = repo.diff(BRANCH).hunks[2]  # "- Do not guess; say you do not know."
    editor = scripted_editor(tmp_path / "ed", replace=[("do not know.", "do not know, and why.")])
    done = _edit(tmp_path / "skills", editor, "--hunk", "3")
    assert done.returncode == 0, done.stderr
    handed = seen(tmp_path / "ed")
    assert handed.splitlines() == [line[1:] for line in hunk.lines if line[:1] in " +"]
    text = repo.git.blob(_head(repo), "quiz/SKILL.md").decode()
    assert text == SKILL_V2.replace("do not know.", "do not know, and why.")
    assert "hunk 3 of staged/demo-finished" in done.stdout


def test_editor_exiting_non_zero_stages_nothing_and_says_so(tmp_path: Path) -> None:
    repo = make_skills_repo(tmp_path / "skills")
    before = _head(repo)
    editor = scripted_editor(tmp_path / "ed", replace=[("Pacific", "Atlantic")], exit_status=3)
    done = _edit(tmp_path / "skills", editor)
    assert done.returncode == 2
    assert _head(repo) == before
    assert done.stderr.strip().splitlines() == [
        "skillopt: error: the editor exited with status 3: nothing staged "
        "(save and quit normally to stage the edit)"
    ]


def test_file_left_unchanged_stages_nothing_and_says_so(tmp_path: Path) -> None:
    repo = make_skills_repo(tmp_path / "skills")
    before = _head(repo)
    done = _edit(tmp_path / "skills", scripted_editor(tmp_path / "ed"), "--hunk", "1")
    assert done.returncode == 0, done.stderr
    assert _head(repo) == before
    assert done.stdout.strip() == "hunk 1 of staged/demo-finished left unchanged: nothing staged"


def test_no_such_hunk_is_one_line_naming_the_hunks_there_are(tmp_path: Path) -> None:
    make_skills_repo(tmp_path / "skills")
    done = _edit(tmp_path / "skills", scripted_editor(tmp_path / "ed"), "--hunk", "9")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "skillopt: error: no hunk 9 in staged/demo-finished; it has hunks 1-3"
    ]
    assert not (tmp_path / "ed" / "seen.md").exists()  # the editor never opened
