"""The installed `skillopt tui` in a real terminal (tmux): review a staged branch, approve a
hunk, adopt, confirm, quit; then check the commit git has."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from core.skills_repo import SkillsRepo
from tests.support.skills_git import plain_git
from tests.support.tmux import NEEDS_TMUX, SKILLOPT, Tmux
from tests.support.tui_app import IDENTITY, RUNS, SKILL_V1, make_skills_repo, stage_split_branch

pytestmark = NEEDS_TMUX


def test_review_adopt_in_a_real_terminal(tmp_path):
    skills = tmp_path / "skills"
    make_skills_repo(skills, deploy_to=tmp_path / "deployed" / "SKILL.md")
    tmux = Tmux(f"skillopt-test-{os.getpid()}")
    # Textual draws on stderr, so it stays the terminal; the exit status is kept in a file
    status = tmp_path / "exit-status"
    command = f"{SKILLOPT} tui --runs-dir {RUNS} --skills-repo {skills}; echo $? > {status}"
    tmux.start(command, 100, 30)
    try:
        tmux.wait_for("demo-finished")  # home: the runs table
        tmux.wait_for("quiz")  # home: the skills table
        tmux("send-keys", "-t", "tui", "v")
        tmux.wait_for("[ ] #3")  # review: three hunks loaded
        tmux("send-keys", "-t", "tui", "y")
        tmux.wait_for("y 1  n 0")  # the evidence panel counts the decisions
        tmux("send-keys", "-t", "tui", "A")
        screen = tmux.wait_for("Adopt these hunks?")
        assert "1 of 3 hunks" in screen
        tmux("send-keys", "-t", "tui", "y")
        tmux.wait_for("Adopted as")
        tmux("send-keys", "-t", "tui", "Escape")
        tmux.wait_for("New run")  # home's footer (an Escape directly followed by q is alt+q)
        tmux("send-keys", "-t", "tui", "q")
        tmux.wait_gone()
    finally:
        tmux.kill()
    assert status.read_text().strip() == "0"

    expected = make_skills_repo(tmp_path / "expected")
    expected.adopt("staged/demo-finished", [1])
    repo = SkillsRepo.open(skills)
    assert repo.log("quiz")[0].kind == "adopt"
    assert repo.read_skill("quiz") == expected.read_skill("quiz")
    assert "Answer exactly the question asked." in repo.read_skill("quiz")
    assert "largest ocean" not in repo.read_skill("quiz")


def _split_repo(path: Path) -> SkillsRepo:
    repo = SkillsRepo.init(path, identity=IDENTITY)
    repo.add_skill("quiz", SKILL_V1)
    stage_split_branch(repo)
    return repo


def test_split_hunk_and_line_choice_at_80x24_equal_the_cli(tmp_path):
    skills = tmp_path / "skills"
    _split_repo(skills)
    tmux = Tmux(f"skillopt-test-split-{os.getpid()}")
    status = tmp_path / "exit-status"
    command = f"{SKILLOPT} tui --runs-dir {RUNS} --skills-repo {skills}; echo $? > {status}"
    tmux.start(command, 80, 24)
    try:
        tmux.wait_for("quiz")
        tmux.keys("v")
        tmux.wait_for("hunk 1/2")
        tmux.keys("s")
        tmux.wait_for("#1.2")  # hunk 1 split into its two changes
        tmux.keys("y", "n")  # first change approved, second rejected
        tmux.wait_for("hunk 3/3")
        tmux.keys("Space", "j", "j", "Space")  # hunk 2: only its 3rd changed line
        tmux.wait_for("x 3")
        tmux.keys("Escape", "A")
        screen = tmux.wait_for("Adopt these hunks?")
        assert "#1.2 (rejected)" in screen
        tmux.keys("y")
        tmux.wait_for("Adopted as")
        tmux.keys("Escape")
        tmux.wait_for("New run")
        tmux.keys("q")
        tmux.wait_gone()
    finally:
        tmux.kill()
    assert status.read_text().strip() == "0"

    expected = tmp_path / "expected"
    _split_repo(expected)
    subprocess.run(
        [
            str(SKILLOPT),
            "skills",
            "adopt",
            "staged/demo-split",
            "--lines",
            "1:1-2",
            "--lines",
            "2:3",
            "--repo",
            str(expected),
        ],
        check=True,
        capture_output=True,
    )
    got, want = SkillsRepo.open(skills), SkillsRepo.open(expected)
    assert got.read_skill("quiz") == want.read_skill("quiz")
    blob = ("rev-parse", "main:quiz/SKILL.md")
    assert plain_git(skills, *blob) == plain_git(expected, *blob)  # the same bytes
    got_t, want_t = got.log("quiz")[0].trailers, want.log("quiz")[0].trailers
    assert (got_t["Hunks"], got_t["Lines"]) == (want_t["Hunks"], want_t["Lines"])
    assert got_t["Adopted-From"].split()[0] == want_t["Adopted-From"].split()[0]
    assert "- Do not guess.\n- Cite a source.\n" in got.read_skill("quiz")
