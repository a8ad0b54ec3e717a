"""Mined tasks: what a night replays, judges and gates on, and their archive on disk.

A mined task is a request a person made of their agent, turned into something a model can
be asked again: the intent (the prompt, redacted), a rubric (what a good answer does, from
the person's own corrections where there were any), literal checks, and the sessions it
came from. Its id is a stable hash of its project and shape, so the same recurring request
keeps one id from night to night and therefore one split (sleep/split.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.atomic import write_json
from core.errors import UserError

CheckKind = Literal["contains", "not_contains"]
TaskKind = Literal["advice", "coding"]


@dataclass(frozen=True)
class Check:
    """A literal check on the reply text: cheap evidence beside the judge's rubric."""

    kind: CheckKind
    value: str

    def passes(self, reply: str) -> bool:
        # A whole-word match: "avoid npm" must not fail on a reply that says "pnpm".
        pattern = r"(?<![\w-])" + re.escape(self.value) + r"(?![\w-])"
        found = re.search(pattern, reply, re.IGNORECASE) is not None
        return found if self.kind == "contains" else not found

    def describe(self) -> str:
        return f"{'mentions' if self.kind == 'contains' else 'avoids'} {self.value!r}"


@dataclass
class MinedTask:
    id: str
    intent: str
    project: str | None
    kind: TaskKind = "advice"
    rubric: str = ""
    checks: list[Check] = field(default_factory=list)
    source_sessions: list[str] = field(default_factory=list)
    skill: str | None = None  # the skill it is attributed to (sleep/routing.py)
    occurrences: int = 1
    first_seen: str | None = None
    last_seen: str | None = None
    branch: str | None = None  # the git branch recorded with the prompt, when any

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["checks"] = [asdict(c) for c in self.checks]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MinedTask:
        data = dict(data)
        data["checks"] = [Check(**c) for c in data.get("checks", [])]
        return cls(**data)


def task_id(project: str | None, shape: str) -> str:
    digest = hashlib.sha256(f"{project or ''}\n{shape}".encode()).hexdigest()
    return f"t-{digest[:12]}"


class TaskArchive:
    """Every task mined so far, one JSON file keyed by id, written atomically. A task seen
    again is merged (more sessions, later last_seen), never duplicated or re-split."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, MinedTask]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {t["id"]: MinedTask.from_dict(t) for t in data["tasks"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(
                f"{self.path}: the mined-task archive is unreadable ({exc}); move it aside "
                "and run the night again to mine afresh"
            ) from None

    def merge(self, found: list[MinedTask], *, write: bool = True) -> dict[str, MinedTask]:
        """The archive with `found` merged in; written unless `write` is False (a dry run)."""
        tasks = self.load()
        for task in found:
            old = tasks.get(task.id)
            tasks[task.id] = task if old is None else merged(old, task)
        if write:
            write_json(self.path, {"version": 1, "tasks": [t.to_dict() for t in tasks.values()]})
        return tasks


def merged(old: MinedTask, new: MinedTask) -> MinedTask:
    """The archive's task updated by tonight's sighting: sessions and checks accumulate;
    the first wording stays (it keeps the task's replay stable across nights)."""
    sessions = list(dict.fromkeys([*old.source_sessions, *new.source_sessions]))
    checks = list(dict.fromkeys([*old.checks, *new.checks]))
    rubric = old.rubric
    if new.rubric and new.rubric not in rubric:
        rubric = f"{rubric}\n{new.rubric}".strip()
    return MinedTask(
        id=old.id,
        intent=old.intent,
        project=old.project,
        kind=old.kind,
        rubric=rubric,
        checks=checks,
        source_sessions=sessions,
        skill=new.skill or old.skill,
        occurrences=max(old.occurrences, len(sessions), new.occurrences),
        first_seen=old.first_seen or new.first_seen,
        last_seen=max(filter(None, [old.last_seen, new.last_seen]), default=None),
        branch=old.branch or new.branch,
    )
