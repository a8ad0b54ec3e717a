"""The projects a `sleep run` visits, and the name each project's nights are filed under.

`sleep init --project P` records P (again for more); a night is one project's: its
harvest is scoped to that project, its tasks, night folder and staged branches carry the
project's name (`staged/sleep-<date>-<project>-<skill>`), so two projects' nights on one
day never share a folder or a branch. Two projects whose folders have the same name are
told apart by a short hash of their path.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sleep.night.instruction_files import slug


def projects_to_run(recorded: list[str], flag: Path | None, cwd: Path) -> list[Path]:
    """`--project P` alone, else every recorded project, else the current directory."""
    if flag is not None:
        return [_absolute(flag)]
    return [_absolute(Path(p)) for p in recorded] or [_absolute(cwd)]


def night_label(project: Path, recorded: list[str]) -> str:
    """The project's name in night ids and branches: its folder's slug, with a hash of its
    path when another recorded project's folder has the same slug (stable either way:
    the same recorded list gives the same label whether one project or all are run)."""
    project = _absolute(project)
    name = slug(project.name)
    others = {_absolute(Path(p)) for p in recorded} - {project}
    if any(slug(p.name) == name for p in others):
        return f"{name}-{hashlib.sha256(os.fsencode(project)).hexdigest()[:6]}"
    return name


def _absolute(path: Path) -> Path:
    return Path(path).expanduser().absolute()


def exit_status(statuses: list[str]) -> int:
    """One exit code for a run over several projects' nights: 1 when any failed, else 3
    when any is waiting or stopped (re-run to continue), else 0."""
    if "failed" in statuses:
        return 1
    return 3 if {"waiting", "stopped"} & set(statuses) else 0
