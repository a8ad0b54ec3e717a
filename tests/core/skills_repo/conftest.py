"""Real git repositories in temp dirs for the skills-repo tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from tests.support.skills_git import BASE_TEXT, SKILL


@pytest.fixture
def repo(tmp_path: Path) -> SkillsRepo:
    r = SkillsRepo.init(tmp_path / "skills", identity=("Test Bot", "bot@example.com"))
    r.add_skill(SKILL, BASE_TEXT, deploy_to=str(tmp_path / "deployed" / "SKILL.md"))
    return r


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return tmp_path / "deployed" / "SKILL.md"
