"""What the skills repository hands to its faces (CLI and TUI)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

LogKind = Literal["init", "add", "adopt", "rollback", "other"]


@dataclass(frozen=True)
class SkillEntry:
    name: str
    path: str  # inside the repo, posix
    deploy_to: str | None = None  # as written in the manifest (may start with ~)


@dataclass(frozen=True)
class StagedBranch:
    name: str  # "staged/<run-id>"
    run_id: str
    skill: str
    commits: int
    head: str
    base: str


@dataclass(frozen=True)
class Hunk:
    index: int  # 1-based, in file order; stable for a given branch head
    file: str
    header: str  # "@@ -a,b +c,d @@ section"
    lines: list[str]  # "+x", "-y", " z", "\\ No newline at end of file"; line ends removed
    added: int
    removed: int
    source_start: int = 0
    source_length: int = 0
    target_start: int = 0
    target_length: int = 0
    # main already holds this hunk's change (an earlier partial adopt, or the same edit made
    # on main): adopting it alone would change nothing
    on_main: bool = False
    # adopting this hunk alone onto main as it is now would not merge cleanly (main changed
    # the same lines since staging): review marks it before anyone tries
    conflicts: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CommitEvidence:
    sha: str
    subject: str
    trailers: dict[str, str]
    body: str


@dataclass(frozen=True)
class StagedDiff:
    branch: str
    skill: str
    hunks: list[Hunk]
    evidence: list[CommitEvidence] = field(default_factory=list)
    base: str = ""
    head: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AdoptResult:
    commit: str
    deployed_to: str | None
    hunks: list[int] = field(default_factory=list)
    archived_as: str | None = None  # adopted/<run-id> when every hunk was adopted


@dataclass(frozen=True)
class LogEntry:
    sha: str
    subject: str
    kind: LogKind
    trailers: dict[str, str]
    date_iso: str
    author: str
    body: str = ""
