"""What a session is, as far as its records have told us so far.

Kept with the file's cursor, so a later read that starts in the middle of the file still
knows the session's project, branch and kind without reading the start again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SessionIdentity:
    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    automation: bool = False
    # Why the file holds no user tasks at all ("subagent"), or None for a root session.
    not_a_root: str | None = None
    # The skills the session used and the instruction files it read (sleep/skills_used.py).
    skills: list[str] = field(default_factory=list)
    skill_files: list[str] = field(default_factory=list)
    # Reader-specific state that must survive between reads (JSON values only).
    carry: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> SessionIdentity:
        if not data:
            return cls()
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)
