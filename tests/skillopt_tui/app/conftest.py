"""Fixtures for the TUI tests (helpers and the skills-repo double are in tui_support)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.tui_app import RUNS, make_skills_repo


@pytest.fixture
def runs_dir() -> Path:
    return RUNS


@pytest.fixture
def skills_repo(tmp_path: Path) -> Path:
    path = tmp_path / "skills"
    make_skills_repo(path, deploy_to=tmp_path / "deployed" / "SKILL.md")
    return path


@pytest.fixture
def copied_run(tmp_path: Path) -> Path:
    """A writable copy of the partial run (tests append events to it)."""
    dest = tmp_path / "runs" / "demo-partial"
    shutil.copytree(RUNS / "demo-partial", dest)
    return dest
