"""The bubblewrap jail for tests that need one (sleep/night/replay_shell.py, sleep/night/replay_checks.py).

`bwrap` on PATH when it works here; else, when `make agents` installed the Codex CLI, the
bubblewrap that CLI ships (a real bwrap, built for Codex) put on PATH for the test; else
the test is skipped. Either way the jail is the real one, probed by starting this
interpreter in it (envs/jail.jail_problem)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from core.models.agents.process import AGENTS_BIN
from envs.jail import jail_problem

CODEX_BWRAP = (
    AGENTS_BIN.parent
    / "@openai"
    / "codex-linux-x64"
    / "vendor"
    / "x86_64-unknown-linux-musl"
    / "codex-resources"
    / "bwrap"
)


_folder: list[Path] = []  # one folder for the session: the jail's probe is cached by path


@pytest.fixture
def jail(tmp_path_factory, monkeypatch) -> str:
    """A working jail on PATH (its bwrap's path), or the test is skipped."""
    if shutil.which("bwrap") and not jail_problem():
        return str(shutil.which("bwrap"))
    if CODEX_BWRAP.is_file():
        if not _folder:
            _folder.append(tmp_path_factory.mktemp("bwrap-bin"))
            (_folder[0] / "bwrap").symlink_to(CODEX_BWRAP)
        monkeypatch.setenv("PATH", f"{_folder[0]}:{os.environ.get('PATH', '')}")
        if not jail_problem():
            return str(_folder[0] / "bwrap")
    pytest.skip(f"no working bubblewrap jail here ({jail_problem()})")
