"""What a session is, as far as its records have told us so far.

Kept with the file's cursor, so a later read that starts in the middle of the file still
knows the session's project, branch and kind without reading the start again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _copy(value: Any) -> Any:
    """A deep copy of JSON values (dicts, lists, tuples of strings, numbers, None)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_copy(v) for v in value)
    return value


@dataclass
class SessionIdentity:
    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    automation: bool = False
    # Why the file holds no user tasks at all ("subagent"), or None for a root session.
    not_a_root: str | None = None
    # The skills the session used and the instruction files it read (sleep/harvest/skills_used.py).
    skills: list[str] = field(default_factory=list)
    skill_files: list[str] = field(default_factory=list)
    # Reader-specific state that must survive between reads (JSON values only).
    carry: dict[str, Any] = field(default_factory=dict)
    # The commit the project was at when the session began, where the agent records it
    # (Codex's session_meta `git.commit_hash`): where a replay of its tasks starts.
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A copy as JSON values, what `dataclasses.asdict` gives, built directly: asdict
        deep-copies through `copy.deepcopy` value by value, a tenth of a first harvest of
        750 files (bench/harvest.py)."""
        return {
            "session_id": self.session_id,
            "cwd": self.cwd,
            "branch": self.branch,
            "automation": self.automation,
            "not_a_root": self.not_a_root,
            "skills": list(self.skills),
            "skill_files": list(self.skill_files),
            "carry": _copy(self.carry),
            "commit": self.commit,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> SessionIdentity:
        if not data:
            return cls()
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)
