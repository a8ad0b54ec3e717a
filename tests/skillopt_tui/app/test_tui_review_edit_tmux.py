"""`e` in Review in a real terminal (tmux): the app hands the terminal to $EDITOR (the
editor reads what is typed, the app does not) and takes it back; the edit is staged on
the same branch, marked `Edited: by hand`."""

from __future__ import annotations

import os
import shlex

from core.skills_repo import SkillsRepo
from tests.support.scripted_editor import scripted_editor
from tests.support.tmux import NEEDS_TMUX, SKILLOPT, Tmux
from tests.support.tui_app import RUNS, SKILL_V2, make_skills_repo

BRANCH = "refs/heads/staged/demo-finished"

pytestmark = NEEDS_TMUX


def test_e_hands_the_terminal_to_the_editor_and_stages_the_edit(tmp_path):
    skills = tmp_path / "skills"
    repo = make_skills_repo(skills)
    before = repo.git.rev(BRANCH)
    editor = scripted_editor(tmp_path / "ed", replace=[("Pacific", "Pacific Ocean")], ask=True)
    tmux = Tmux(f"skillopt-test-edit-{os.getpid()}")
    command = (
        f"EDITOR={shlex.quote(editor)} VISUAL= "
        f"{SKILLOPT} tui --runs-dir {RUNS} --skills-repo {skills}"
    )
    tmux.start(command, 100, 30)
    try:
        tmux.wait_for("quiz")  # home: the skills table
        tmux.keys("v")
        tmux.wait_for("[ ] #3")
        tmux.keys("j")  # hunk #2: + largest ocean: Pacific
        tmux.keys("e")
        tmux.wait_for("SCRIPTED EDITOR")  # the editor has the terminal
        tmux.keys("o", "k", "Enter")  # typed to the editor, not to the app
        screen = tmux.wait_for("staged your edit")
        assert "[ ] #" in screen  # the app drew itself again
        tmux.keys("q")
        tmux.wait_gone()
    finally:
        tmux.kill()
    repo = SkillsRepo.open(skills)
    head = repo.git.rev(BRANCH)
    assert repo.git.line("rev-parse", f"{head}^") == before
    assert repo.diff("staged/demo-finished").evidence[-1].trailers["Edited"] == "by hand"
    text = repo.git.blob(head, "quiz/SKILL.md").decode()
    assert text == SKILL_V2.replace("Pacific", "Pacific Ocean")
