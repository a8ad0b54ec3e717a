"""Starts `skillopt sleep run` as a child process and reads its progress lines.

The night is the same one cron runs: settings come from the state directory's sleep.yaml,
the night writes its own folder, and quitting the TUI leaves it running (its own session,
as with a training run). Stopping is a SIGINT, which the engine turns into a clean stop
at the next step boundary; running the night again continues it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

from core import exit_codes
from skillopt_tui.app.train_launcher import skillopt_command

PREFIX = "skillopt: sleep: "
NIGHT_LINE = re.compile(r"^skillopt: sleep: night (sleep-[\w-]+),")
EXIT_STOPPED = exit_codes.STOPPED  # waiting for handoff answers, or stopped: resumable


def night_command(state_dir: Path) -> list[str]:
    return [*skillopt_command(), "sleep", "run", "--state-dir", str(state_dir)]


class NightLauncher:
    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self.state_dir: Path | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, state_dir: Path) -> subprocess.Popen[bytes]:
        self.state_dir = Path(state_dir)
        fd, log = tempfile.mkstemp(prefix="skillopt-night-", suffix=".log")
        self.log_path = Path(log)
        self.process = subprocess.Popen(
            night_command(self.state_dir),
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
        )
        os.close(fd)
        return self.process

    def stop(self) -> None:
        if self.alive and self.process is not None:
            self.process.send_signal(signal.SIGINT)

    def lines(self) -> list[str]:
        if self.log_path is None or not self.log_path.exists():
            return []
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return [line for line in text.splitlines() if line.strip()]

    def night_id(self) -> str | None:
        for line in self.lines():
            match = NIGHT_LINE.match(line)
            if match:
                return match.group(1)
        return None

    def progress(self) -> str:
        """The night's latest progress line, without the command's prefix."""
        lines = self.lines()
        return lines[-1].removeprefix(PREFIX) if lines else "starting…"

    def log_tail(self, lines: int = 4) -> str:
        return "\n".join(line.removeprefix(PREFIX) for line in self.lines()[-lines:])
