"""Starts `skillopt train` as a child process and finds the run directory it creates.

The run is an ordinary headless run: the TUI follows its `events.jsonl` like any other,
so detaching (quitting the TUI) leaves it running, and stopping it is a SIGINT, which the
trainer turns into a clean stop at the next step boundary (resumable).

The child's output (what it printed before its run directory existed included, such as a
config error) goes to `<runs dir>/.tui-logs/<run name>.log`: beside the runs, where a
detached run's log can be found, and not listed as a run (listings skip dot folders). The
TUI removes it once the run has ended and its tail has been shown.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from skillopt_tui.app.run_feed import EVENTS_FILE

LOG_DIR = ".tui-logs"  # in the runs folder


def skillopt_command() -> list[str]:
    """The installed console script next to this interpreter, else the module entry."""
    script = Path(sys.executable).with_name("skillopt")
    if script.exists():
        return [str(script)]
    found = shutil.which("skillopt")
    if found:
        return [found]
    return [sys.executable, "-c", "from skillopt_tui.cli.main import main; main()"]


def resume_command(run_dir: Path, launched: list[str] | None = None) -> list[str] | None:
    """The command that resumes `run_dir`: the one this window started it with, else
    `skillopt train` on the config the run directory keeps. None without a config."""
    if launched and str(run_dir) in launched:
        return launched
    config = run_dir / "config.yaml"
    if not config.exists():
        return None
    return [*skillopt_command(), "train", "--config", str(config), "--out", str(run_dir)]


def train_command(
    config: Path, run_dir: Path, skills_repo: Path | None = None, skill: str | None = None
) -> list[str]:
    cmd = [*skillopt_command(), "train", "--config", str(config), "--out", str(run_dir)]
    if skills_repo is not None and skill:
        cmd += ["--skills-repo", str(skills_repo), "--skill", skill]
    return cmd


class TrainLauncher:
    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self.run_dir: Path | None = None
        self.command: list[str] = []  # the last command started (shown to resume it)
        self.stop_asked = False  # a stop was sent; the run ends after its current call

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(
        self,
        config: Path,
        runs_dir: Path,
        skills_repo: Path | None = None,
        skill: str | None = None,
    ) -> subprocess.Popen[bytes]:
        """Starts a fresh run in a new directory `<runs_dir>/<config stem>-<time>`; with a
        skills repo and skill, the run stages its accepted candidates there for review."""
        runs_dir.mkdir(parents=True, exist_ok=True)
        name = f"{config.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir = runs_dir / name
        n = 1
        while run_dir.exists():
            n += 1
            run_dir = runs_dir / f"{name}-{n}"
        return self.start_command(train_command(config, run_dir, skills_repo, skill), run_dir)

    def start_command(self, cmd: list[str], run_dir: Path) -> subprocess.Popen[bytes]:
        """Runs `skillopt train … --out run_dir` (a new run, or a resume of that one)."""
        self.run_dir = run_dir
        self.command = cmd
        self.stop_asked = False
        self.log_path = run_dir.parent / LOG_DIR / f"{run_dir.name}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            # own session: a terminal ^C in the TUI does not reach it; detach keeps it alive
            self.process = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )
        return self.process

    def wait_for_events(self, timeout_s: float = 60.0) -> Path | None:
        """The run directory once its events log exists; None if the process ended first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.run_dir is not None:
            if (self.run_dir / EVENTS_FILE).exists():
                return self.run_dir
            if not self.alive:
                return self.run_dir if (self.run_dir / EVENTS_FILE).exists() else None
            time.sleep(0.1)
        return None

    def stop(self) -> None:
        """Ask for a stop at the next step boundary."""
        if self.alive and self.process is not None:
            self.process.send_signal(signal.SIGINT)
            self.stop_asked = True

    @property
    def stopping(self) -> bool:
        """A stop is pending: asked for, and the process has not ended yet."""
        return self.stop_asked and self.alive

    def log_tail(self, lines: int = 5) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.strip().splitlines()[-lines:])

    def finished_tail(self, lines: int = 5) -> str:
        """The ended run's last lines, its log then removed (with the folder, if empty)."""
        tail = self.log_tail(lines)
        if self.log_path is not None and not self.alive:
            self.log_path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                self.log_path.parent.rmdir()
        return tail
