"""What a harvest produces: sessions with the tasks a person typed, and files it skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

Tool = Literal["claude", "codex", "pi", "opencode", "copilot", "vscode", "cursor"]


@runtime_checkable
class TaskReader(Protocol):
    """What every agent's transcript reader (sleep/harvest/<agent>.py) gives the harvest,
    so a new agent is one module and the harvest never asks which agent it reads: the
    file's records are fed in order, then `finish` closes what the file's end closes;
    `tasks` are the prompts typed, `abandoned` the prompts on branches the person left
    (pi's session trees; 0 for agents whose files have no branches)."""

    tasks: list[Task]
    abandoned: int

    def feed(self, record: dict) -> None: ...

    def finish(self) -> None: ...


@dataclass
class Task:
    """One prompt a person typed in a root session. `text` is redacted before it leaves
    the harvester; `timestamp` is the record's own UTC ISO-8601 time (None when the
    format has none)."""

    text: str
    timestamp: str | None
    aborted: bool = False
    # What the session shows of the answer (sleep/harvest/session_evidence.py): the tools the
    # assistant called, the shell commands it ran, its last text reply (all redacted).
    tools: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    answer: str = ""
    # Cut at sleep/prompt_cap.MAX_PROMPT_CHARS (the text ends with a note saying so).
    truncated: bool = False
    # The person stopped the turn (Claude Code's "[Request interrupted by user" sentinel,
    # Codex's turn_aborted, pi's Escape, a cancelled VS Code request, Copilot's abort).
    # `aborted` also covers failed and unanswered turns; only `interrupted` says the
    # person changed their mind, so the night does not train on it (sleep/mine/interrupted.py).
    interrupted: bool = False
    # The file edits the agent made in this turn through its edit tools, in order
    # (sleep/harvest/file_edits.py): {path, new, old?, write?, replace_all?} as recorded, each
    # redaction-clean (one the redaction would change is dropped), replayed before a
    # follow-up of the same session. A reader may key them by tool call id
    # (`edit_calls`) until it learns the call failed.
    edits: list[dict] = field(default_factory=list)
    edit_calls: dict[str, list[dict]] = field(default_factory=dict, repr=False, compare=False)
    # The files the agent read in this turn, as recorded (sleep/harvest/file_reads.py): a
    # question about the code is replayed with their content at its start commit.
    reads: list[str] = field(default_factory=list)

    def to_json(self, *, evidence: bool = True) -> dict:
        """The prompt; with `evidence`, also what the session showed of its answer (what a
        night freezes and mines; `sleep harvest --json` lists the prompts only)."""
        data: dict = {"text": self.text, "timestamp": self.timestamp, "aborted": self.aborted}
        if self.truncated:
            data["truncated"] = True
        if self.interrupted:
            data["interrupted"] = True
        for name in ("tools", "commands", "answer", "edits", "reads") if evidence else ():
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data


@dataclass
class Session:
    """The new tasks of one session file since its cursor."""

    source: Tool
    session_id: str
    cwd: str | None
    branch: str | None
    file: str
    automation: bool
    tasks: list[Task] = field(default_factory=list)
    # The skills it used and the instruction files it read (sleep/harvest/skills_used.py): the
    # routing rule "the skill named in the transcript".
    skills: list[str] = field(default_factory=list)
    skill_files: list[str] = field(default_factory=list)
    # Prompts on branches the person left (pi's session tree): reported, never tasks.
    abandoned: int = 0
    # The commit the session began at, where its agent recorded it (SessionIdentity).
    commit: str | None = None

    def to_json(self, *, evidence: bool = True) -> dict:
        """With `evidence` (what a night freezes), also the skills the session used."""
        data = {
            "source": self.source,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "branch": self.branch,
            "file": self.file,
            "automation": self.automation,
            "tasks": [t.to_json(evidence=evidence) for t in self.tasks],
        }
        if evidence:
            data.update(skills=list(self.skills), skill_files=list(self.skill_files))
        if self.abandoned:
            data["abandoned"] = self.abandoned
        if self.commit:
            data["commit"] = self.commit
        return data


@dataclass(frozen=True)
class Skipped:
    """A file, or lines of one, that could not be read, and why. `part` says how much of
    the file was skipped ("file", "1 line", "3 lines", "the rest"), so a single bad line
    is never reported as if the whole file were lost."""

    file: str
    reason: str
    part: str = "file"

    def line(self) -> str:
        """The console line: `skipped 1 line of FILE: reason` or `skipped FILE: reason`."""
        what = self.file if self.part == "file" else f"{self.part} of {self.file}"
        return f"skipped {what}: {self.reason}"

    def detail(self) -> str:
        """What was skipped and why, beside the file's name (a table cell)."""
        return self.reason if self.part == "file" else f"{self.part} skipped: {self.reason}"

    def to_json(self) -> dict:
        return {"file": self.file, "part": self.part, "reason": self.reason}
