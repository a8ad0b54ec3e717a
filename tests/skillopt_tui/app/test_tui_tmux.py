"""The installed `skillopt tui` in a real terminal (tmux): review a staged branch, approve a
hunk, adopt, confirm, quit; then check the commit git has. Uses its own tmux server
(socket) so it never touches a user's sessions."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from tests.support.tui_app import RUNS, make_skills_repo

REPO = Path(__file__).resolve().parents[3]
SKILLOPT = REPO / ".venv" / "bin" / "skillopt"

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"
    ),
]


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=check
        )

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "tui").stdout

    def wait_for(self, text: str, tries: int = 150) -> str:
        """Polls the screen (bounded number of tries) until `text` shows."""
        screen = ""
        for _ in range(tries):
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; screen was:\n{screen}")

    def alive(self) -> bool:
        return self("has-session", "-t", "tui", check=False).returncode == 0


def test_review_adopt_in_a_real_terminal(tmp_path):
    skills = tmp_path / "skills"
    make_skills_repo(skills, deploy_to=tmp_path / "deployed" / "SKILL.md")
    tmux = Tmux(f"skillopt-test-{os.getpid()}")
    # Textual draws on stderr, so it stays the terminal; the exit status is kept in a file
    status = tmp_path / "exit-status"
    command = f"{SKILLOPT} tui --runs-dir {RUNS} --skills-repo {skills}; echo $? > {status}"
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "100", "-y", "30", command)
    try:
        tmux("set-option", "-t", "tui", "status", "off")
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
        for _ in range(100):
            if not tmux.alive():
                break
            time.sleep(0.1)
        assert not tmux.alive(), tmux.screen()
    finally:
        tmux("kill-server", check=False)
    assert status.read_text().strip() == "0"

    expected = make_skills_repo(tmp_path / "expected")
    expected.adopt("staged/demo-finished", [1])
    repo = SkillsRepo.open(skills)
    assert repo.log("quiz")[0].kind == "adopt"
    assert repo.read_skill("quiz") == expected.read_skill("quiz")
    assert "Answer exactly the question asked." in repo.read_skill("quiz")
    assert "largest ocean" not in repo.read_skill("quiz")
