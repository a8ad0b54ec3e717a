"""A private world for driving `skillopt sleep ...` as a user runs it (a subprocess): a
home with Claude Code and Codex transcripts, a project, a state directory, and a run
helper that fails the test on a hang instead of hanging it. `call` runs the same command
in the test's process (tests/support/cli_in_process.py) for suites of many cases."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.sleep.transcripts import (
    claude_user,
    codex_meta,
    codex_prompt,
    write_claude,
    write_codex,
)
from tests.support.cli_in_process import run_main

SKILLOPT = Path(sys.executable).parent / "skillopt"
REPO = Path(__file__).resolve().parents[2]
LIMIT_S = 120  # far above a harvest of a few files; a hang is what it catches


@dataclass
class World:
    root: Path
    home: Path
    project: Path
    state: Path
    env: dict

    @property
    def claude(self) -> Path:
        return self.home / ".claude"

    @property
    def codex(self) -> Path:
        return self.home / ".codex"

    def run(self, *args: str, input: str | None = None, prefix: tuple[str, ...] = ()):
        try:
            return subprocess.run(
                [*prefix, str(SKILLOPT), *args],
                env=self.env,
                capture_output=True,
                text=True,
                input=input if input is not None else "",
                timeout=LIMIT_S,
                cwd=self.project if self.project.is_dir() else self.root,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"skillopt {' '.join(args)} still running after {LIMIT_S} s"
            ) from None

    def call(self, *args: str) -> subprocess.CompletedProcess:
        """`run(*args)` without the process: the same environment, working directory and
        empty stdin, in this process (no hang limit: nothing here waits on a child)."""
        cwd = self.project if self.project.is_dir() else self.root
        return run_main(list(args), env=self.env, cwd=cwd, argv0=str(SKILLOPT))


def make_world(root: Path, prompt: str = "fix the failing test in the parser module") -> World:
    """One Claude Code session and one Codex session in `project`, each with `prompt`."""
    home, project = root / "home", root / "proj"
    project.mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# Notes\n\nKeep answers short.\n")
    write_claude(home / ".claude", [claude_user(prompt, cwd=str(project), session="c-1")],
                 session="c-1")  # fmt: skip
    write_codex(home / ".codex", [codex_meta(cwd=str(project)), *codex_prompt(prompt)])
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    env.update(
        HOME=str(home),
        PYTHONPATH=str(REPO),
        XDG_STATE_HOME=str(root / "xdg"),
        XDG_DATA_HOME=str(root / "xdg-data"),
        PATH="/usr/bin:/bin",
        LC_ALL="C.UTF-8",
    )
    return World(root, home, project, root / "xdg" / "skillopt" / "sleep", env)


def one_line_error(out: subprocess.CompletedProcess) -> str:
    """The error of a refused command: exit 2, one line on stderr, no traceback."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("skillopt: error: "), out.stderr
    return out.stderr
