"""The preferences a person has shown so far, read back from the mined-task archive.

A night groups preferences from the tasks it routes; after the night, a dry run with no
new sessions routed nothing, so `dry-run --json` said `preferences: []`, and night.json,
`sleep status` and the TUI's Sleep screen had no list at all (issue 37). The archive
(`<state>/tasks.json`) keeps every night's tasks with their corrections, so grouping its
tasks again, project by project, gives the same preferences (their ids are stable) with
every occurrence: task, session, agent and date.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sleep.mine.preferences import group_preferences
from sleep.mine.tasks import MinedTask, TaskArchive


def in_project(cwd: str | None, project: Path | None) -> bool:
    """Whether a task asked in folder `cwd` belongs to `project` (None: any project)."""
    if project is None:
        return True
    if cwd is None:
        return False
    root = Path(project).expanduser().absolute()
    here = Path(cwd).expanduser().absolute()
    return here == root or root in here.parents


def known_preferences(
    state_dir: Path, project: Path | None = None, tonight: Iterable[MinedTask] = ()
) -> list[dict[str, Any]]:
    """The preferences in the archive's tasks and `tonight`'s (a dry run's, not yet
    archived), grouped within each project (a need of one repository is not another's),
    each as `Preference.to_dict()` with its `project`: the tasks of `project` when given
    (asked anywhere inside it), else each task's own folder. Most said first within a
    project, projects in name order."""
    tasks = TaskArchive(Path(state_dir) / "tasks.json").load()
    tasks.update({t.id: t for t in tonight})
    return _grouped(tasks.values(), project)


def preferences_of_projects(state_dir: Path, projects: Iterable[str]) -> list[dict[str, Any]]:
    """`known_preferences` of each recorded project (`sleep status`, the TUI), or of every
    task's folder when none is recorded; the archive is read once for them all."""
    tasks = list(TaskArchive(Path(state_dir) / "tasks.json").load().values())
    listed = list(projects)
    if not listed:
        return _grouped(tasks, None)
    return [p for project in listed for p in _grouped(tasks, Path(project))]


def _grouped(tasks: Iterable[MinedTask], project: Path | None) -> list[dict[str, Any]]:
    """The preferences of `tasks`, grouped project by project (see `known_preferences`)."""
    by_project: dict[str, list[MinedTask]] = {}
    for task in tasks:
        if task.project is not None and in_project(task.project, project):
            name = str(project) if project is not None else task.project
            by_project.setdefault(name, []).append(task)
    return [
        {**pref.to_dict(), "project": name}
        for name in sorted(by_project)
        for pref in group_preferences(by_project[name])
    ]


def preference_line(pref: dict[str, Any]) -> str:
    """One preference on one line: its name, how often and by which agents it was said."""
    occurrences = pref.get("occurrences") or []
    sessions = len({o.get("session") for o in occurrences})
    agents = ", ".join(sorted({str(o.get("agent")) for o in occurrences}))
    dates = sorted(str(o["date"])[:10] for o in occurrences if o.get("date"))
    when = f", {dates[0]} to {dates[-1]}" if len(dates) > 1 else (f", {dates[0]}" if dates else "")
    name = pref.get("name") or pref.get("text")
    said = pref.get("said", len(occurrences))  # one prompt on two tasks is said once
    return f'"{name}": said {said}x in {sessions} session(s) ({agents}{when})'
