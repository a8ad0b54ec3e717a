"""Which skill a night's tasks improve.

A session that shows which skill it used (the harvest lists the skills a session invoked
or was shown, in `skills`) has its tasks attributed to that skill, when the skills
repository holds a skill of that name. Every other session goes to the project's main
instruction file: the skill deployed to `<project>/CLAUDE.md` or `<project>/AGENTS.md`.
`--skill NAME` sends everything to one skill. How each group was routed is part of the
staged evidence (the `Routed-By` trailer).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.skills_repo.types import SkillEntry

MAIN_FILES = ("CLAUDE.md", "AGENTS.md")
BY_TRANSCRIPT = "skill named in the transcripts"
BY_MAIN_FILE = "project instruction file"
BY_FLAG = "--skill"


@dataclass
class Route:
    skill: str
    routed_by: str
    sessions: list[dict[str, Any]] = field(default_factory=list)


def _same_path(a: str, b: Path) -> bool:
    return os.path.normpath(os.path.expanduser(a)) == os.path.normpath(str(b))


def main_skill(entries: list[SkillEntry], project: Path | None) -> str | None:
    if project is not None:
        for name in MAIN_FILES:
            target = Path(project).expanduser().absolute() / name
            for entry in entries:
                if entry.deploy_to and _same_path(entry.deploy_to, target):
                    return entry.name
    return entries[0].name if len(entries) == 1 else None


def route_sessions(
    sessions: list[dict[str, Any]],
    entries: list[SkillEntry],
    *,
    project: Path | None,
    forced: str | None = None,
) -> list[Route]:
    names = {e.name for e in entries}
    if forced is not None:
        if forced not in names:
            raise UserError(
                f"--skill {forced}: the skills repository has no such skill "
                f"(it has: {', '.join(sorted(names)) or 'none'}); add it with skillopt skills add"
            )
        return [Route(forced, BY_FLAG, list(sessions))]
    default = main_skill(entries, project)
    routes: dict[str, Route] = {}
    unrouted: list[dict[str, Any]] = []
    for session in sessions:
        used = [s for s in session.get("skills", []) if s in names]
        if used:
            route = routes.setdefault(used[0], Route(used[0], BY_TRANSCRIPT))
            route.sessions.append(session)
        else:
            unrouted.append(session)
    if unrouted:
        if default is None:
            raise UserError(
                "no skill to improve: the skills repository has no skill deployed to the "
                "project's CLAUDE.md or AGENTS.md; run `skillopt sleep init --project PATH` "
                "or pass --skill NAME"
            )
        route = routes.get(default)
        if route is None:
            routes[default] = Route(default, BY_MAIN_FILE, unrouted)
        else:
            route.sessions.extend(unrouted)
    return sorted(routes.values(), key=lambda r: r.skill)
