"""The installed `skillopt tui` in a real terminal (tmux) on a Sleep world: open Sleep, read
the redactions (the secret never on screen), run a night with `r` (a real `skillopt sleep
run` on the scripted TEST DOUBLE), review the branch it staged, quit; then check git."""

from __future__ import annotations

import os
import shlex

from core.skills_repo import SkillsRepo
from skillopt_tui.app.night_launcher import LOG_FILE
from tests.support.sleep_world import make_world
from tests.support.tmux import NEEDS_TMUX, REPO, SKILLOPT, Tmux

SECRET = "AKIAIOSFODNN7EXAMPLE"

pytestmark = NEEDS_TMUX


def test_run_a_night_and_review_it_in_a_real_terminal(tmp_path):
    world = make_world(tmp_path)
    status = tmp_path / "exit-status"
    env = f"HOME={shlex.quote(str(world.home))} PYTHONPATH={shlex.quote(str(REPO))}"
    command = (
        f"{env} {SKILLOPT} tui --runs-dir {tmp_path / 'runs'} --skills-repo {world.skills}"
        f" --state-dir {world.state}; echo $? > {status}"
    )
    tmux = Tmux(f"skillopt-test-sleep-{os.getpid()}")
    tmux.start(command, 100, 30)
    screens = []
    try:
        tmux.wait_for("notes-app")  # home: the skills table
        tmux.keys("s")
        screens.append(tmux.wait_for("press r to run one"))  # Nights: none yet
        tmux.keys("3")
        screens.append(tmux.wait_for("aws_access_key_id"))  # the redaction, not the key
        tmux.keys("4", "r")
        screens.append(tmux.wait_for("Run a night now?"))  # it asks first
        tmux.keys("y")
        # The night ran and staged (7-10 s alone; the wait ends before pytest-timeout's
        # 900 s, so a night that never stages fails with the screen and its log below).
        # (the ↳ row keeps the branch name's tail at 100 columns; the detail pane names it whole)
        screens.append(tmux.wait_for("staged staged/", tries=800))
        tmux.keys("Down", "Down", "v")  # the ↳ row: its staged branch
        screens.append(tmux.wait_for("hunk 1/"))  # Review, on the night's branch
        tmux.keys("Escape", "Escape")
        tmux.wait_for("New run")
        tmux.keys("q")
        tmux.wait_gone()
    finally:
        screens.append(tmux.screen() if tmux.alive() else "")
        tmux.kill()
        night_log = world.state / LOG_FILE  # shown with a failure: what the night said
        print(night_log.read_text(errors="replace")[-4000:] if night_log.exists() else "")
    assert status.read_text().strip() == "0"
    assert not any(SECRET in screen for screen in screens)
    [branch] = SkillsRepo.open(world.skills).staged_branches()
    assert branch.skill == "notes-app"
    assert branch.name in screens[3]  # the staged screen (after the dialog's)
