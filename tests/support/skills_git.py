"""Helpers for tests that drive real git repositories (skills repository tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKILL = "reviewer"
# Twelve lines: far enough apart that a change near the top and one near the bottom are two
# hunks with three lines of context.
BASE_TEXT = "".join(f"line {i}\n" for i in range(1, 13))


def plain_git(repo: Path, *args: str, input: bytes | None = None) -> str:
    """git as a user would run it (isolated from this machine's config), for checking state
    and for making hand commits behind the tool's back."""
    env = {
        **os.environ,
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Hand",
        "GIT_AUTHOR_EMAIL": "hand@example.com",
        "GIT_COMMITTER_NAME": "Hand",
        "GIT_COMMITTER_EMAIL": "hand@example.com",
    }
    out = subprocess.run(
        ["git", "-C", str(repo), *args], input=input, capture_output=True, env=env, check=True
    )
    return out.stdout.decode("utf-8")


def run_python(code: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter that imports this checkout."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, **kw
    )


def edit_lines(text: str, changes: dict[int, str]) -> str:
    lines = text.splitlines(keepends=True)
    for number, value in changes.items():
        lines[number - 1] = value
    return "".join(lines)
