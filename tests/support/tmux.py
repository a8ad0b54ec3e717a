"""A private tmux server for the real-terminal tests: its own socket, so it never touches a
user's sessions; the screen polled a bounded number of times (stretched by PATIENCE on a
loaded machine, never timed)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.tui_app import PATIENCE

REPO = Path(__file__).resolve().parents[2]
SKILLOPT = REPO / ".venv" / "bin" / "skillopt"  # the installed console script, as users run it

NEEDS_TMUX = [  # a real-terminal test module's `pytestmark`
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

    def start(self, command: str, width: int, height: int) -> None:
        self(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "tui",
            "-x",
            str(width),
            "-y",
            str(height),
            command,
        )
        self("set-option", "-t", "tui", "status", "off")

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "tui").stdout

    def wait_for(self, text: str, tries: int = 150) -> str:
        """Polls the screen until `text` shows; fails with the screen it saw."""
        screen = ""
        for _ in range(tries * PATIENCE):
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; screen was:\n{screen}")

    def keys(self, *keys: str) -> None:
        """One key at a time with a pause: an Escape directly followed by a key is alt+key."""
        for key in keys:
            self("send-keys", "-t", "tui", key)
            time.sleep(0.25)

    def alive(self) -> bool:
        return self("has-session", "-t", "tui", check=False).returncode == 0

    def wait_gone(self) -> None:
        for _ in range(100 * PATIENCE):
            if not self.alive():
                return
            time.sleep(0.1)
        raise AssertionError(f"the app did not quit; screen was:\n{self.screen()}")

    def kill(self) -> None:
        self("kill-server", check=False)
