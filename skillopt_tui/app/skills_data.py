"""The skills repository as the app sees it: opened lazily, read in thread workers.

All git work goes through `core.skills_repo.SkillsRepo` (which serialises git calls); this
module only gathers what a screen needs in one blocking call. `repo_factory` lets a test
hand in a double with fixed data (for stable snapshots).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError


class SkillsRepoUnavailable(UserError):
    """No skills repository was given, or it could not be opened."""


@dataclass(frozen=True)
class SkillRow:
    name: str
    deploy_to: str | None
    staged: int
    last_adoption: str  # "YYYY-MM-DD subject" or ""


@dataclass(frozen=True)
class SkillsOverview:
    skills: list[SkillRow] = field(default_factory=list)
    staged: list[Any] = field(default_factory=list)  # StagedBranch
    problem: str = ""  # why there is nothing to show, if so


def _open_real(path: Path) -> Any:
    from core.skills_repo import SkillsRepo

    return SkillsRepo.open(path)


class SkillsSource:
    def __init__(
        self, path: Path | None, repo_factory: Callable[[Path], Any] | None = None
    ) -> None:
        self.path = path
        self._factory = repo_factory or _open_real
        self._repo: Any = None
        self._lock = threading.Lock()

    def repo(self) -> Any:
        if self.path is None:
            raise SkillsRepoUnavailable(
                "no skills repository: start with `skillopt tui --skills-repo PATH`"
            )
        with self._lock:
            if self._repo is None:
                self._repo = self._factory(self.path)
            return self._repo

    def overview(self) -> SkillsOverview:
        """Never raises a UserError: a repo that cannot be read (absent, or a malformed
        committed skills.yaml) is a `problem` the screens show instead of the tables."""
        try:
            repo = self.repo()
            staged = list(repo.staged_branches())
            rows = []
            for entry in repo.list_skills():
                count = sum(1 for b in staged if b.skill == entry.name)
                rows.append(
                    SkillRow(
                        entry.name, _str(entry.deploy_to), count, _last_adoption(repo, entry.name)
                    )
                )
        except UserError as exc:
            return SkillsOverview(problem=str(exc))
        return SkillsOverview(rows, staged)

    def version(self) -> tuple | None:
        """Where main and every staged branch point now (None: unreadable): a screen that
        showed the repository at one version reloads when this moves."""
        try:
            repo = self.repo()
            main = repo.main_sha() if hasattr(repo, "main_sha") else ""
            return (main, tuple((b.name, b.head) for b in repo.staged_branches()))
        except UserError:
            return None

    def deploy_target(self, skill: str) -> str | None:
        for entry in self.repo().list_skills():
            if entry.name == skill:
                return _str(entry.deploy_to)
        return None


def _last_adoption(repo: Any, skill: str) -> str:
    for entry in repo.log(skill):
        if entry.kind == "adopt":
            return f"{entry.date_iso[:10]} {entry.subject}"
    return ""


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
