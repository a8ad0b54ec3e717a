"""Mined tasks: what a night replays, judges and gates on, and their archive on disk.

A mined task is a request a person made of their agent, turned into something a model can
be asked again: the intent (the prompt, redacted), a rubric (what a good answer does, from
the person's own corrections where there were any), literal checks, and the sessions it
came from. Its id is a stable hash of its project and shape, so the same recurring request
keeps one id from night to night and therefore one split (sleep/mine/split.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from core.atomic import write_json
from core.errors import UserError
from sleep.harvest.file_edits import FileEdit, edit_problem
from sleep.mine.check_rules import describe_check, evaluate_check
from sleep.mine.kinds import TaskKind, normalise_kind

CheckKind = Literal[
    "contains",
    "not_contains",
    "command",
    "diff_adds",
    "diff_not_adds",
    "no_new_import",
    "ran",
    "answer_first_line_max",
    "answer_starts_with",
    "no_commit",
    "diff_leaves",
]
CHECK_KINDS: tuple[str, ...] = get_args(CheckKind)
MAX_CONTEXT_CHARS = 3000  # the earlier turns a follow-up keeps, in all
MAX_READ_FILES = 20  # the files a task keeps of those its sessions read
MAX_HISTORY_COMMANDS = 5  # the history commands a task keeps of those its sessions ran


@dataclass(frozen=True)
class ReplayEvidence:
    """What a replay produced that a check can read without a judge: the final reply,
    the diff of the workspace and the commands the agent ran. `diff` and `commands` are
    None where the replay had no workspace (a chat call): a check on them then says
    nothing (`Check.evaluate` gives None), it does not fail."""

    reply: str
    diff: str | None = None
    commands: list[str] | None = None
    # the project's own top-level modules (an import of one is not a new dependency)
    local_modules: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Check:
    """A check a replay applies without a judge:
    - `contains` / `not_contains`: a literal, whole-word, on the reply text;
    - `command`: a verification command the session ran (`make test`), run in the
      replay's workspace after the agent finishes (sleep/night/replay_checks.py);
    - `diff_adds` / `diff_not_adds`: a regular expression on the diff's added lines;
    - `no_new_import`: the diff adds no third-party import or dependency;
    - `ran`: a regular expression over the commands the agent ran (`make test`);
    - `answer_first_line_max`: the reply's first line within "N chars" or "N words";
    - `answer_starts_with`: the reply opens with one of `|`-separated words (`yes|no`);
    - `no_commit`: the agent made no commit (no `git commit` among the commands it ran);
    - `diff_leaves`: the diff touches no file whose path matches a regular expression
      (the tests: "leave the tests alone").
    The mechanical form of a person's correction or constraint (sleep/mine/correction_checks.py)."""

    kind: CheckKind
    value: str

    @property
    def on_reply(self) -> bool:
        """Applied to the replay's evidence by the environment (not run as a command)."""
        return self.kind != "command"

    def evaluate(self, evidence: ReplayEvidence) -> bool | None:
        """Whether the replay passes this check; None when its evidence has nothing to
        tell (a diff check on a chat reply, a command check: run elsewhere)."""
        return evaluate_check(self.kind, self.value, evidence)

    def describe(self) -> str:
        return describe_check(self.kind, self.value)


@dataclass(frozen=True)
class Correction:
    """One correction the person made of a task's answer: its words (redacted), the
    session and agent it was made in, and when (the prompt's timestamp, if recorded)."""

    text: str
    session: str
    agent: str
    date: str | None = None
    # What the person needs, as the miner model named it ("timezone-aware UTC times"):
    # it groups preferences before any wording does (sleep/mine/preferences.py); one
    # correction may state two ("no emojis and no essay"). Empty: the heuristic's.
    needs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["needs"] = list(self.needs)
        if not self.needs:
            del data["needs"]  # archives from before needs read the same
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Correction:
        return cls(**{**data, "needs": tuple(data.get("needs", ()))})


MAX_CORRECTION_CHARS = 500


@dataclass(frozen=True)
class FollowUp:
    """A prompt that followed the task's answer, and how mining read it: attached as a
    correction of this task or not (a request of its own), and why, in one line
    (sleep/mine/follow_up.py): what a person checks when a correction landed wrong."""

    text: str
    attached: bool
    why: str


@dataclass(frozen=True)
class Turn:
    """An earlier turn of the session a follow-up depends on (redacted, bounded)."""

    prompt: str
    answer: str = ""


@dataclass
class MinedTask:
    id: str
    intent: str
    project: str | None
    kind: TaskKind = "advice"
    rubric: str = ""
    checks: list[Check] = field(default_factory=list)
    source_sessions: list[str] = field(default_factory=list)
    skill: str | None = None  # the skill it is attributed to (sleep/night/routing.py)
    occurrences: int = 1
    first_seen: str | None = None
    last_seen: str | None = None
    branch: str | None = None  # the git branch recorded with the prompt, when any
    context: list[Turn] = field(default_factory=list)  # earlier turns it follows up on
    reference: str = ""  # what the person accepted (an excerpt of the answer, redacted)
    # Mined with nothing to judge it by (no rubric, reference or check): it may teach but
    # never gates. Sticky from the first sighting, so a task never moves from train to val.
    train_only: bool = False
    # Its session's earlier turns' file edits, in order, paths relative to the session's
    # folder (sleep/harvest/file_edits.py): applied to the replay's copy before it starts.
    # Absent from archives written before they were kept.
    prior_edits: list[FileEdit] = field(default_factory=list)
    # When the session of its first sighting began (its first prompt's time), and the
    # commit it began at where the agent recorded it (Codex): the replay starts there
    # (sleep/night/edited_tree.start_commit), where the person started, not where the
    # work ended.
    session_started: str | None = None
    session_commit: str | None = None
    # What the person said they want of it, in order (sleep/mine/heuristic.py): the corrections
    # they made of its answers and the constraints they stated up front ("standard
    # library only"); and the preference they belong to (sleep/mine/preferences.py: a stable
    # id, None until grouped). Absent from archives written before they were kept.
    corrections: list[Correction] = field(default_factory=list)
    preference: str | None = None
    # The files its session's agent read to answer it, relative to the session's folder
    # (sleep/harvest/file_reads.py): a chat replay of a question about the code is given
    # their content at its start commit (sleep/night/read_files.py). Absent from archives
    # written before they were kept.
    read_files: list[str] = field(default_factory=list)
    # Its session read the project's git history (`git log`, `git show`…: "summarise what
    # changed this week"). Its replay is given the history up to its start commit
    # (sleep/night/history.py); where it cannot be, a failure lacked its inputs.
    reads_history: bool = False
    # The shell commands of its session that read the history, as recorded: a chat replay
    # is shown what they print at its start commit (sleep/night/history.py). Absent from
    # archives written before they were kept.
    history_commands: list[str] = field(default_factory=list)
    # The prompts that followed its answers in its sessions and how each was read
    # (attached as a correction or not, and why). Absent from archives written before.
    follow_ups: list[FollowUp] = field(default_factory=list)

    @property
    def has_evidence(self) -> bool:
        return bool(self.rubric or self.reference or self.checks)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["checks"] = [asdict(c) for c in self.checks]
        data["context"] = [asdict(t) for t in self.context]
        data["prior_edits"] = [e.to_dict() for e in self.prior_edits]
        data["corrections"] = [c.to_dict() for c in self.corrections]
        data["follow_ups"] = [asdict(f) for f in self.follow_ups]
        for name in (
            "prior_edits",
            "corrections",
            "preference",
            "read_files",
            "session_started",
            "session_commit",
            "reads_history",
            "history_commands",
            "follow_ups",
        ):
            if not data[name]:
                del data[name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MinedTask:
        """Also reads archives written before kinds, context and references existed. A
        task that is not what we write is a MalformedTask saying which field."""
        problem = task_problem(data)
        if problem:
            raise MalformedTask(problem)
        data = dict(data)
        data["checks"] = [Check(**c) for c in data.get("checks", [])]
        data["context"] = [Turn(**t) for t in data.get("context", [])]
        data["prior_edits"] = [FileEdit.from_dict(e) for e in data.get("prior_edits", [])]
        data["corrections"] = [Correction.from_dict(c) for c in data.get("corrections", [])]
        data["follow_ups"] = [FollowUp(**f) for f in data.get("follow_ups", [])]
        data["kind"] = normalise_kind(data.get("kind", "advice"))
        task = cls(**data)
        if "train_only" not in data:
            task.train_only = not task.has_evidence
        return task


class MalformedTask(ValueError):
    """A stored task (archive or a night's frozen tasks) that is not what we write."""


_OPTIONAL_STR = (str, type(None))
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str,), "intent": (str,), "project": _OPTIONAL_STR, "kind": (str,),
    "rubric": (str,), "checks": (list,), "source_sessions": (list,), "skill": _OPTIONAL_STR,
    "occurrences": (int,), "first_seen": _OPTIONAL_STR, "last_seen": _OPTIONAL_STR,
    "branch": _OPTIONAL_STR, "context": (list,), "reference": (str,), "train_only": (bool,),
    "prior_edits": (list,), "corrections": (list,), "preference": _OPTIONAL_STR,
    "session_started": _OPTIONAL_STR, "session_commit": _OPTIONAL_STR, "read_files": (list,),
    "reads_history": (bool,), "history_commands": (list,), "follow_ups": (list,),
}  # fmt: skip
_REQUIRED = ("id", "intent", "project")


def _strings(value: Any, fields: tuple[str, ...]) -> bool:
    return (
        isinstance(value, dict)
        and set(value) <= set(fields)
        and all(isinstance(value.get(f), str) for f in fields[:1])
        and all(isinstance(v, str) for v in value.values())
    )


def _correction(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and {"text", "session", "agent"}
        <= set(value)
        <= {"text", "session", "agent", "date", "needs"}
        and all(isinstance(value[f], str) for f in ("text", "session", "agent"))
        and isinstance(value.get("date"), _OPTIONAL_STR)
        and isinstance(value.get("needs", []), list)
        and all(isinstance(n, str) for n in value.get("needs", []))
    )


def _follow_up(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"text", "attached", "why"}
        and isinstance(value["text"], str)
        and isinstance(value["attached"], bool)
        and isinstance(value["why"], str)
    )


def task_problem(data: Any) -> str:
    """What is wrong with a stored task ('' when MinedTask.from_dict can read it)."""
    if not isinstance(data, dict):
        return f"a task is {type(data).__name__}, not an object"
    name = repr(data["id"]) if isinstance(data.get("id"), str) else "without an id"
    missing = [f for f in _REQUIRED if f not in data]
    unknown = sorted(set(data) - set(_FIELD_TYPES))
    wrong = [
        f
        for f, types in _FIELD_TYPES.items()
        if f in data
        and (not isinstance(data[f], types) or (bool not in types and isinstance(data[f], bool)))
    ]
    if missing or unknown or wrong:
        return f"task {name}: bad fields {', '.join(missing + unknown + wrong)}"
    checks = data.get("checks", [])
    if not all(
        _strings(c, ("kind", "value")) and len(c) == 2 and c["kind"] in CHECK_KINDS for c in checks
    ):
        return f"task {name}: a check is not {{kind, value}}"
    if not all(_correction(c) for c in data.get("corrections", [])):
        return f"task {name}: a correction is not {{text, session, agent, date, needs}}"
    if not all(_follow_up(f) for f in data.get("follow_ups", [])):
        return f"task {name}: a follow-up is not {{text, attached, why}}"
    if not all(_strings(t, ("prompt", "answer")) for t in data.get("context", [])):
        return f"task {name}: a context turn is not {{prompt, answer}}"
    edit = next((p for p in map(edit_problem, data.get("prior_edits", [])) if p), "")
    if edit:
        return f"task {name}: {edit}"
    for listed in ("source_sessions", "read_files", "history_commands"):
        if not all(isinstance(s, str) for s in data.get(listed, [])):
            return f"task {name}: {listed} is not a list of strings"
    return ""


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
            if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
                raise MalformedTask('not {"tasks": [...]}')
            tasks = [MinedTask.from_dict(t) for t in data["tasks"]]
        except (OSError, ValueError) as exc:
            raise UserError(
                f"{self.path}: the mined-task archive is unreadable ({exc}); restore it from "
                "a backup, or delete it to mine afresh (the next night mines the sessions "
                "it reads)"
            ) from None
        return {t.id: t for t in tasks}

    def merge(
        self,
        found: list[MinedTask],
        *,
        write: bool = True,
        stored: Mapping[str, MinedTask] | None = None,
    ) -> dict[str, MinedTask]:
        """The archive with `found` merged in; written unless `write` is False (a dry run).
        `stored` is the archive as the caller already read it (a night reads it once)."""
        tasks = dict(stored) if stored is not None else self.load()
        for task in found:
            old = tasks.get(task.id)
            tasks[task.id] = task if old is None else merged(old, task)
        if write:
            write_json(self.path, {"version": 1, "tasks": [t.to_dict() for t in tasks.values()]})
        return tasks


def stronger_kind(old: TaskKind, new: TaskKind) -> TaskKind:
    """A kind that says "never replay" wins (a request seen once as a deploy stays one),
    then agentic over advice (a sighting whose answer used the project's tools)."""
    for kind in ("redacted", "external", "agentic"):
        if kind in (old, new):
            return kind  # type: ignore[return-value]
    return old


def merged(old: MinedTask, new: MinedTask) -> MinedTask:
    """The archive's task updated by tonight's sighting: sessions and checks accumulate;
    the first wording stays (it keeps the task's replay stable across nights)."""
    sessions = list(dict.fromkeys([*old.source_sessions, *new.source_sessions]))
    checks = list(dict.fromkeys([*old.checks, *new.checks]))
    kind = stronger_kind(old.kind, new.kind)
    rubric = old.rubric
    if new.rubric and new.rubric not in rubric:
        rubric = f"{rubric}\n{new.rubric}".strip()
    return MinedTask(
        id=old.id,
        intent=old.intent,
        project=old.project,
        kind=kind,
        rubric=rubric,
        checks=checks,
        source_sessions=sessions,
        skill=new.skill or old.skill,
        occurrences=max(old.occurrences, len(sessions), new.occurrences),
        first_seen=old.first_seen or new.first_seen,
        last_seen=max(filter(None, [old.last_seen, new.last_seen]), default=None),
        branch=old.branch or new.branch,
        context=old.context or new.context,
        prior_edits=old.prior_edits if old.context or old.prior_edits else new.prior_edits,
        reference=old.reference or new.reference,
        train_only=old.train_only,
        corrections=merged_corrections(old.corrections, new.corrections),
        preference=new.preference or old.preference,
        session_started=old.session_started or new.session_started,
        session_commit=old.session_commit if old.session_started else new.session_commit,
        read_files=list(dict.fromkeys([*old.read_files, *new.read_files]))[:MAX_READ_FILES],
        reads_history=old.reads_history or new.reads_history,
        history_commands=list(dict.fromkeys([*old.history_commands, *new.history_commands]))[
            :MAX_HISTORY_COMMANDS
        ],
        follow_ups=list(dict.fromkeys([*old.follow_ups, *new.follow_ups])),
    )


def merged_corrections(old: list[Correction], new: list[Correction]) -> list[Correction]:
    """Each correction once, in the order first seen; one seen again with the needs the
    miner named replaces its sighting without them (else it would count twice: under its
    need and under its wording)."""
    out: dict[tuple[str, str, str, str | None], Correction] = {}
    for c in [*old, *new]:
        key = (c.text, c.session, c.agent, c.date)
        if key not in out or c.needs:
            out[key] = c
    return list(out.values())


def task_listing(task: MinedTask, planned: Any, tonight: Any) -> dict[str, Any]:
    """What `dry-run --json` shows of a task beside its ids: its kind, the mode it is
    replayed in and, when tonight skips it, why (both sleep.night.replay_modes.Replay: the
    `planned` mode, and `tonight`'s, which skips a mode not implemented yet), and what it
    is judged by, and the earlier edits its replay starts with (paths, not contents)."""
    return {
        "kind": task.kind,
        "replay": planned.mode,
        "skip_reason": tonight.skip_reason,
        "rubric": task.rubric,
        "reference": task.reference,
        "checks": [asdict(c) for c in task.checks],
        "context": [asdict(t) for t in task.context],
        "prior_edits": [e.describe() for e in task.prior_edits],  # applied before it
        "read_files": task.read_files,  # a chat replay is given their content
        "reads_history": task.reads_history,  # its replay is given the history
        "history_commands": task.history_commands,  # a chat replay is shown their output
        "train_only": task.train_only,
        "preference": task.preference,  # the id in the plan's `preferences`, if any
        # each prompt that followed its answer: attached as a correction or not, and why
        "follow_ups": [asdict(f) for f in task.follow_ups],
    }
