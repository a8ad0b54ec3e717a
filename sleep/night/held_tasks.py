"""The person's tasks a night holds, so that no sequence of commands loses one.

The night is the one consumer of the harvest cursors, and it moves them only after it has
frozen what it read into its own folder (`sessions.json`, redacted):

- a night that is running (interrupted), stopped or waiting keeps its frozen sessions and
  stays open: the next `sleep run` continues it, on any later day, with the same tasks;
- a failed night stays open for the rest of its day (a re-run retries it); once a later
  day's night starts it is closed, its sessions are carried to
  `<state>/carried-sessions.json`, and that night takes them up beside its own harvest.

So a task is always in at least one of: the transcripts past an unmoved cursor, an open
night's folder, the carry archive, or a night that took it up (a crash between the freeze
and the cursors' save can leave it in two; the mined-task archive merges it by id).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic import write_json
from core.errors import UserError
from sleep.harvest.model import Skipped
from sleep.harvest.run import HarvestOptions, HarvestResult, harvest
from sleep.mine.tasks import task_problem

SESSIONS_FILE = "sessions.json"
CARRY_FILE = "carried-sessions.json"
# Statuses of a night the next run continues whatever the day.
RESUMABLE = frozenset({"running", "stopped", "waiting"})
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_NUMBER = re.compile(r"-(\d+)$")


@dataclass
class Harvested:
    """What a night read: the sessions in the harvest's JSON shape, how many automation
    sessions the harvest left out, and which closed nights' sessions it carried in."""

    sessions: list[dict[str, Any]]
    automation_skipped: int = 0
    carried_from: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, result: HarvestResult) -> Harvested:
        return cls([s.to_json() for s in result.sessions], result.left_out["automation"])

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "automation_skipped": self.automation_skipped,
            "carried_from": self.carried_from,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Harvested:
        return cls(
            list(data.get("sessions", [])),
            int(data.get("automation_skipped", 0)),
            list(data.get("carried_from", [])),
        )


# `freeze` is called with what was read before any cursor moves; a harvester returns it too.
Freeze = Callable[[Harvested], None]
Harvester = Callable[[Freeze], Harvested]


def transcript_harvester(
    options: HarvestOptions, report: Callable[[Skipped], None] = lambda _s: None
) -> Harvester:
    """The harvester of `sleep run` / `dry-run`: reads the transcripts, has the night freeze
    them, and only then (when `options.commit`) saves the moved cursors."""

    def run(freeze: Freeze) -> Harvested:
        result = harvest(options, before_commit=lambda r: freeze(Harvested.of(r)))
        for skipped in result.skipped:
            report(skipped)
        return Harvested.of(result)

    return run


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UserError(
            f"{path}: unreadable ({exc}); move it aside to start the night again"
        ) from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a JSON object; move it aside to start the night again")
    return data


def read_frozen(path: Path, key: str) -> Any:
    """`key` of a file the night froze (sessions.json: a list of sessions; tasks.json:
    tasks by skill and split), or a UserError naming the file when it is not that shape:
    a hand-edited or truncated file would otherwise be a KeyError mid-night."""
    value = read_json(path).get(key)
    if key == "sessions":
        ok = isinstance(value, list) and all(isinstance(v, dict) for v in value)
    else:
        ok = isinstance(value, dict) and all(
            isinstance(splits, dict)
            and all(isinstance(ts, list) and all(isinstance(t, dict) for t in ts)
                    for ts in splits.values())
            for splits in value.values()
        )  # fmt: skip
    problem = "" if ok else f"no {key!r} in the shape the night wrote"
    if ok and key == "skills":  # each task as MinedTask.from_dict reads it
        problems = (task_problem(t) for ts in value.values() for tl in ts.values() for t in tl)
        problem = next((p for p in problems if p), "")
    if problem:
        raise UserError(f"{path}: unreadable ({problem}); move it aside to start the night again")
    return value


def session_ids(sessions: list[dict[str, Any]]) -> list[str]:
    return [f"{s.get('source', '?')}:{s.get('session_id', '?')}" for s in sessions]


def frozen(folder: Path) -> Harvested | None:
    """The night's frozen harvest, or None when it has not harvested yet."""
    path = folder / SESSIONS_FILE
    if not path.exists():
        return None
    read_frozen(path, "sessions")  # the shape the night wrote, else one line naming it
    return Harvested.from_json(read_json(path))


def freeze(folder: Path, harvested: Harvested) -> None:
    write_json(folder / SESSIONS_FILE, harvested.to_json())


# -- which night a run continues --------------------------------------------------------


def _day_and_number(night_id: str) -> tuple[dt.date, int] | None:
    """The day in a night's id (`sleep-2026-12-01`, `sleep-2026-12-01-2`, or with more
    words after the date) and its number that day."""
    found = _DAY.search(night_id)
    if found is None:
        return None
    try:
        day = dt.date.fromisoformat(found.group(0))
    except ValueError:
        return None
    number = _NUMBER.search(night_id[found.end() :])
    return day, int(number.group(1)) if number else 1


def _nights(nights_dir: Path, project: str | None) -> list[tuple[dt.date, Path, dict[str, Any]]]:
    """The project's night folders with their night.json, oldest first (by the day and
    number in their id). A night recorded without a project belongs to every project."""
    if not nights_dir.is_dir():
        return []
    found = []
    for folder in nights_dir.iterdir():
        when = _day_and_number(folder.name)
        if when is None or not folder.is_dir():
            continue
        night = read_json(folder / "night.json")
        if night.get("project") in (None, project):
            found.append((when, folder.name, folder, night))
    return [(when[0], folder, night) for when, _name, folder, night in sorted(found)]


def _is_open(night: dict[str, Any], day: dt.date, today: dt.date) -> bool:
    status = night.get("status")
    if status in RESUMABLE:
        return True
    return status == "failed" and not night.get("closed") and day >= today


def open_night(nights_dir: Path, today: dt.date, project: str | None) -> Path | None:
    """The project's latest night the next run continues: running (interrupted), stopped
    or waiting on any day, or failed today."""
    for day, folder, night in reversed(_nights(nights_dir, project)):
        if _is_open(night, day, today):
            return folder
    return None


def _failed_before(state_dir: Path, today: dt.date, project: str | None) -> list[Path]:
    """The project's failed nights of earlier days not closed yet: the next night closes
    them."""
    return [
        folder
        for day, folder, night in _nights(Path(state_dir) / "nights", project)
        if night.get("status") == "failed" and not night.get("closed") and day < today
    ]


# -- the carry archive -------------------------------------------------------------------


class CarryArchive:
    """Sessions of nights closed as failed, keyed by night id, with the night's project,
    until a night of that project takes them up. Keyed so that closing a night twice (a
    crash in between) never doubles its tasks."""

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / CARRY_FILE

    def _load(self) -> dict[str, dict[str, Any]]:
        return dict(read_json(self.path).get("nights", {}))

    def load(self, project: str | None) -> dict[str, Harvested]:
        return {
            night_id: Harvested.from_json(entry)
            for night_id, entry in self._load().items()
            if entry.get("project") in (None, project)
        }

    def _save(self, nights: dict[str, dict[str, Any]]) -> None:
        if nights:
            write_json(self.path, {"version": 1, "nights": nights})
        else:
            self.path.unlink(missing_ok=True)

    def add(self, night_id: str, harvested: Harvested, project: str | None) -> None:
        self._save({**self._load(), night_id: {**harvested.to_json(), "project": project}})

    def drop(self, night_ids: list[str]) -> None:
        self._save({k: v for k, v in self._load().items() if k not in night_ids})


def close_failed_nights(state_dir: Path, today: dt.date, project: str | None) -> list[str]:
    """Close the project's failed nights of earlier days: carry their frozen sessions
    first, then mark them closed (a crash in between closes them again, harmlessly)."""
    archive = CarryArchive(state_dir)
    closed = []
    for folder in _failed_before(state_dir, today, project):
        harvested = frozen(folder)
        if harvested is not None and harvested.sessions:
            archive.add(folder.name, harvested, project)
        night = read_json(folder / "night.json")
        write_json(folder / "night.json", {**night, "closed": True})
        closed.append(folder.name)
    return closed


def carried(state_dir: Path, today: dt.date, project: str | None) -> dict[str, Harvested]:
    """What the project's new night takes up: its carry archive entries, plus (for a dry
    run, which closes nothing) the failed nights a real run would close first."""
    out = CarryArchive(state_dir).load(project)
    for folder in _failed_before(state_dir, today, project):
        harvested = frozen(folder)
        if harvested is not None and harvested.sessions:
            out.setdefault(folder.name, harvested)
    return out


def with_carried(harvested: Harvested, carry: dict[str, Harvested]) -> Harvested:
    """Tonight's harvest with the carried nights' sessions before it (oldest first)."""
    sessions = [s for h in carry.values() for s in h.sessions]
    return Harvested(
        sessions + harvested.sessions,
        harvested.automation_skipped,
        [*harvested.carried_from, *carry],
    )
