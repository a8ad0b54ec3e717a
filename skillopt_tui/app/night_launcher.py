"""Starts `skillopt sleep run` as a child process and reads its progress lines.

The night is the same one cron runs: settings come from the state directory's sleep.yaml,
the night writes its own folder, and quitting the TUI leaves it running (its own session,
as with a training run). Stopping is a SIGINT, which the engine turns into a clean stop
at the next step boundary; running the night again continues it.

Because the night outlives the TUI, so does its output: it goes to `tui-night.log` in the
state directory, appended to as cron's nights append to `cron.log` there, and this window
reads only what its own night wrote (not a new file in /tmp per night, which nothing removed).
"""

from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

from core import exit_codes
from skillopt_tui.app.train_launcher import skillopt_command

PREFIX = "skillopt: sleep: "
NIGHT_LINE = re.compile(r"^skillopt: sleep: night (sleep-[\w-]+),")
EXIT_STOPPED = exit_codes.STOPPED  # waiting for handoff answers, or stopped: resumable
LOG_FILE = "tui-night.log"  # in the state directory (sleep.state.state_dir.FILES)


def night_command(state_dir: Path) -> list[str]:
    return [*skillopt_command(), "sleep", "run", "--state-dir", str(state_dir)]


class NightLauncher:
    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self.log_start = 0  # where this window's night begins in the shared log
        self.state_dir: Path | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, state_dir: Path) -> subprocess.Popen[bytes]:
        self.state_dir = Path(state_dir)
        self.log_path = self.state_dir / LOG_FILE
        with self.log_path.open("ab") as log:
            self.log_start = log.tell()
            self.process = subprocess.Popen(
                night_command(self.state_dir),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        return self.process

    def stop(self) -> None:
        if self.alive and self.process is not None:
            self.process.send_signal(signal.SIGINT)

    def lines(self) -> list[str]:
        if self.log_path is None or not self.log_path.exists():
            return []
        with self.log_path.open("rb") as log:
            log.seek(self.log_start)
            text = log.read().decode("utf-8", errors="replace")
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
