"""Did an adopted Sleep edit help? The sessions after its adoption, read for its preference.

A staged night records the preferences its candidate addressed (night.json's
`evidence.preferences`). Once the person adopts that branch, the sessions harvested
since (same project, agents that read the adopted file) tell whether the person still
corrects the same thing: "logging, not print: corrected 4× in 9 sessions before adoption,
0× in 6 sessions after". A preference corrected again after adoption is flagged, with the
command that rolls that adoption back.

What it reads: the skills repository's log (adoptions: `Adopted-From` and their time; an
adoption rolled back whole is left out), every night's night.json and frozen
sessions.json (the sessions and when each began), and the mined-task archive (each
correction's preference, agent and time, sleep/mine/preferences.py).
"""

from __future__ import annotations

import contextlib
import json
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.errors import UserError
from sleep.harvest.timestamps import parse_timestamp
from sleep.mine.preferences import group_preferences
from sleep.mine.tasks import TaskArchive
from sleep.night.routing import family, readers


@dataclass(frozen=True)
class Effect:
    """One adopted edit's preference, before and after its adoption."""

    preference: str  # its id
    text: str
    skill: str
    adoption: str  # the adoption commit on main
    adopted_at: str
    corrected_before: int
    sessions_before: int
    corrected_after: int
    sessions_after: int
    rollback: str  # the command that undoes the adoption

    @property
    def corrected_again(self) -> bool:
        return self.corrected_after > 0

    def line(self) -> str:
        words = " ".join(self.text.split())
        text = words if len(words) <= 60 else words[:59] + "…"
        said = (
            f"{text}: corrected {self.corrected_before}× in {self.sessions_before} sessions "
            f"before adoption, {self.corrected_after}× in {self.sessions_after} sessions after"
        )
        if self.corrected_again:
            said += f" — corrected again since adoption; to undo it: {self.rollback}"
        return said

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "corrected_again": self.corrected_again, "line": self.line()}


def _nights(state_dir: Path) -> list[Path]:
    return sorted((Path(state_dir) / "nights").glob("sleep-*"))


def _json(path: Path) -> Any:
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text(encoding="utf-8"))
    return None


def addressed_by_branch(state_dir: Path) -> dict[str, dict[str, Any]]:
    """{staged branch: {skill, project, preferences: [{id, text}]}} from every night."""
    out: dict[str, dict[str, Any]] = {}
    for folder in _nights(state_dir):
        night = _json(folder / "night.json")
        skills = night.get("skills") if isinstance(night, dict) else None
        for skill, outcome in (skills or {}).items():
            if not isinstance(outcome, dict) or not isinstance(outcome.get("staged"), str):
                continue
            evidence = outcome.get("evidence") or {}
            prefs = [
                p
                for p in evidence.get("preferences") or []
                if isinstance(p, dict) and isinstance(p.get("id"), str)
            ]
            if prefs:
                out[outcome["staged"]] = {
                    "skill": skill,
                    "project": night.get("project"),
                    "preferences": prefs,
                }
    return out


def session_starts(state_dir: Path) -> dict[str, tuple[str, str | None, str]]:
    """{`source:id`: (source, cwd, when it began)} of every session a night froze."""
    found: dict[str, tuple[str, str | None, str]] = {}
    for folder in _nights(state_dir):
        data = _json(folder / "sessions.json")
        sessions = data.get("sessions") if isinstance(data, dict) else None
        for s in sessions if isinstance(sessions, list) else []:
            if not isinstance(s, dict):
                continue
            stamps = [t.get("timestamp") for t in s.get("tasks") or [] if isinstance(t, dict)]
            began = min((t for t in stamps if isinstance(t, str) and t), default=None)
            if began is None:
                continue
            key = f"{s.get('source', '?')}:{s.get('session_id', '?')}"
            found.setdefault(key, (str(s.get("source") or ""), s.get("cwd"), began))
    return found


def _inside(cwd: str | None, project: str | None) -> bool:
    if not project:
        return True
    if not cwd:
        return False
    return Path(cwd) == Path(project) or Path(project) in Path(cwd).parents


def _reads(source: str, agents: frozenset[str] | None) -> bool:
    return agents is None or family(source) in agents or source in agents


def adoption_effects(state_dir: Path, skills_repo: str | Path | None) -> list[Effect]:
    """Every adopted (and not rolled back) Sleep branch's preferences, counted before and
    after its adoption; [] without a readable skills repository."""
    if not skills_repo:
        return []
    from core.skills_repo import SkillsRepo

    try:
        repo = SkillsRepo.open(Path(skills_repo))
        log = repo.log()
        entries = {e.name: e for e in repo.list_skills()}
        tasks = TaskArchive(Path(state_dir) / "tasks.json").load()
    except (UserError, OSError):
        return []
    undone = {
        e.trailers.get("Reverts", "")
        for e in log
        if e.kind == "rollback" and "Hunks" not in e.trailers  # rolled back whole
    }
    addressed = addressed_by_branch(state_dir)
    sessions = session_starts(state_dir)
    preferences = {p.id: p for p in group_preferences(tasks.values())}
    effects = []
    for entry in reversed(log):  # oldest adoption first
        branch = entry.trailers.get("Adopted-From", "").split(" ")[0]
        if entry.kind != "adopt" or entry.sha in undone or branch not in addressed:
            continue
        record = addressed[branch]
        skill_entry = entries.get(record["skill"])
        agents = readers(skill_entry) if skill_entry is not None else None
        adopted = parse_timestamp(entry.date_iso)
        if adopted is None:
            continue
        seen = [
            parse_timestamp(began)
            for source, cwd, began in sessions.values()
            if _reads(source, agents) and _inside(cwd, record["project"])
        ]
        before = sum(1 for t in seen if t is not None and t < adopted)
        after = sum(1 for t in seen if t is not None and t >= adopted)
        rollback = shlex.join(
            ["skillopt", "skills", "rollback", entry.sha, "--repo", str(repo.path)]
        )
        for pref in record["preferences"]:
            known = preferences.get(pref["id"])
            dates = [
                parse_timestamp(o.date)
                for o in (known.occurrences if known else [])
                if _reads(o.agent, agents)
            ]
            effects.append(
                Effect(
                    preference=pref["id"],
                    text=str(pref.get("text") or (known.text if known else pref["id"])),
                    skill=record["skill"],
                    adoption=entry.sha,
                    adopted_at=entry.date_iso,
                    corrected_before=sum(1 for d in dates if d is not None and d < adopted),
                    sessions_before=before,
                    corrected_after=sum(1 for d in dates if d is not None and d >= adopted),
                    sessions_after=after,
                    rollback=rollback,
                )
            )
    return effects
