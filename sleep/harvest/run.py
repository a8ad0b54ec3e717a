"""One harvest: find the transcripts, read what is new in each, keep the user tasks of the
sessions in scope, redact them, and (when committing) move the cursors on. The night is
the one consumer of the cursors: it commits only after freezing what it read, and
`skillopt sleep harvest` is a preview unless told `--mark-read`.

Files are read oldest first (by mtime), so a parent session is delivered before the
resumed or forked sessions that replay it. A file that cannot be read, or lines of it, are
reported in `skipped` and never stop the harvest. Only sessions whose tasks were handed
out move their cursor past the start: a session outside the project, or an automation
session left out, keeps offset 0 and is delivered whole when a later harvest asks for it.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from core.clean_text import clean_strings, clean_text
from core.errors import UserError
from core.file_lock import FileLock
from core.models.agents.process import recorded_sessions
from core.path_text import shown
from sleep.harvest import copilot as copilot_tasks
from sleep.harvest import cursor as cursor_tasks
from sleep.harvest import pi as pi_tasks
from sleep.harvest import vscode as vscode_tasks
from sleep.harvest.agent_roots import MORE_FLAGS, discover_more
from sleep.harvest.claude import ClaudeTaskReader
from sleep.harvest.codex import CodexTaskReader
from sleep.harvest.copilot_store import STORE as COPILOT_STORE
from sleep.harvest.cursors import Cursor, HarvestState, digest, probe
from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import (
    MAX_LINE_BYTES,
    CompressedUnsupported,
    JsonlReader,
    LineProblems,
    open_transcript,
)
from sleep.harvest.model import Session, Skipped, Task, TaskReader
from sleep.harvest.prompt_cap import redact_capped
from sleep.harvest.sources import (
    SourceRoot,
    TranscriptFile,
    check_more_roots,
    check_roots,
    discover,
)
from sleep.harvest.stores import read_copilot_store, read_opencode_store
from sleep.harvest.timestamps import parse_timestamp
from sleep.redact import Redacted, Redactor
from sleep.state.state_dir import check_state_dir

STATE_FILE = "harvest-state.json"
LOCK_FILE = "harvest.lock"


def default_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "skillopt" / "sleep"


@dataclass
class HarvestOptions:
    state_dir: Path
    project: Path | None = None  # None: every project
    claude_home: str | None = None
    codex_home: str | None = None
    pi_home: str | None = None
    opencode_data: str | None = None
    copilot_home: str | None = None
    vscode_user_dir: str | None = None
    cursor_home: str | None = None
    since: datetime | None = None
    include_automation: bool = False
    # False: read everything from the cursors without moving them (a preview).
    commit: bool = True
    environ: Mapping[str, str] | None = None
    home: Path | None = None


@dataclass
class RedactionShown:
    file: str
    kind: str
    context: str
    hint: str


@dataclass
class HarvestResult:
    roots: list[SourceRoot]
    sessions: list[Session] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    redactions: Counter = field(default_factory=Counter)
    shown: list[RedactionShown] = field(default_factory=list)
    files_read: int = 0
    files_unchanged: int = 0
    bytes_read: int = 0
    # Sessions out of scope or left out as automation, by reason (for the screen).
    left_out: Counter = field(default_factory=Counter)
    # Prompts on abandoned branches (pi's session trees): reported, never tasks.
    abandoned: int = 0

    def to_json(self, *, show_redactions: bool = False) -> dict:
        data = {
            "sessions": [s.to_json(evidence=False) for s in self.sessions],
            "skipped": [s.to_json() for s in self.skipped],
            "redactions": dict(sorted(self.redactions.items())),
        }
        if show_redactions:
            data["redaction_preview"] = [
                {"file": r.file, "kind": r.kind, "context": r.context, "hint": r.hint}
                for r in self.shown
            ]
        return data


class HarvestBusy(UserError):
    """Another harvest holds the state directory."""


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _line_skips(file: str, problems: LineProblems) -> list[Skipped]:
    """One entry per kind of bad line, saying how many lines of the file were skipped."""
    out = []
    if problems.not_json:
        at = problems.first_offset["not_json"]
        out.append(
            Skipped(file, f"not a JSON object (first at byte {at})", _lines(problems.not_json))
        )
    if problems.too_long:
        at = problems.first_offset["too_long"]
        limit = MAX_LINE_BYTES // (1024 * 1024)
        out.append(
            Skipped(file, f"over {limit} MiB (first at byte {at})", _lines(problems.too_long))
        )
    return out


def _scope_roots(project: Path) -> list[str]:
    absolute = os.path.normpath(os.path.abspath(project))
    return sorted({absolute, os.path.realpath(absolute)})


def _in_scope(cwd: str | None, roots: list[str] | None) -> bool:
    if roots is None:
        return True
    if not cwd:
        return False
    cwd = os.path.normpath(cwd)
    return any(cwd == r or cwd.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


class Harvest:
    def __init__(self, options: HarvestOptions) -> None:
        self.options = options
        self.redactor = Redactor()
        self.scope = None if options.project is None else _scope_roots(options.project)
        self.state = HarvestState()
        self.result = HarvestResult(roots=[])
        # Redactions of the file being read (a Codex prompt is redacted once for its key
        # and once for delivery otherwise); cleared per file so memory stays flat.
        self._redacted: dict[str, tuple[Redacted, bool]] = {}
        # Sessions our own agent backends started (core.models.agents.process records their
        # ids): automation whatever their records say, so a night never learns from a replay.
        self.ours = recorded_sessions(options.environ)
        # Copilot's session-store.db: the branch it recorded per session id.
        self._copilot_branches: dict[str, str] = {}

    # -- prompt keys (hash of the redacted text: no raw prompt is ever stored) ------------

    def _redact(self, text: str) -> Redacted:
        return self._redact_capped(text)[0]

    def _redact_capped(self, text: str) -> tuple[Redacted, bool]:
        """The text redacted and capped (sleep/harvest/prompt_cap.py), and whether it was cut."""
        done = self._redacted.get(text)
        if done is None:
            done = self._redacted[text] = redact_capped(self.redactor, text)
        return done

    def _key_of(self, text: str) -> str:
        return hashlib.sha256(self._redact(text).text.encode("utf-8")).hexdigest()[:16]

    def _parent_keys(self, thread_id: str) -> set[str]:
        return set(self.state.codex_prompt_keys.get(thread_id, ()))

    # -- one file --------------------------------------------------------------------------

    def _wanted(self, ident: SessionIdentity) -> str | None:
        """Why the session is left out, or None when its tasks are delivered."""
        if ident.not_a_root:
            return ident.not_a_root
        if not _in_scope(ident.cwd, self.scope):
            return "other project"
        if self._automation(ident) and not self.options.include_automation:
            return "automation"
        return None

    def _automation(self, ident: SessionIdentity) -> bool:
        return ident.automation or (ident.session_id or "") in self.ours

    def _read(self, file: TranscriptFile, st: os.stat_result) -> None:
        cursor = self.state.cursors.get(file.key)
        unchanged = (
            cursor is not None
            and cursor.path == file.shown
            and (cursor.size, cursor.mtime_ns) == (st.st_size, st.st_mtime_ns)
        )
        if unchanged and cursor is not None:
            ident = SessionIdentity.from_json(cursor.identity)
            if cursor.delivered or self._wanted(ident) is not None:
                self.result.files_unchanged += 1
                if not cursor.delivered and not ident.not_a_root:
                    self.result.left_out[self._wanted(ident) or ""] += 1
                return
        self._redacted.clear()
        stream = open_transcript(file.path)
        try:
            start, head, tail, ident = 0, b"", b"", SessionIdentity()
            if file.tool in _WHOLE_FILE:
                # A tree or an operation log: read whole; the cursor carries what was
                # delivered (and the identity) so only new prompts are handed out.
                if cursor is not None and cursor.delivered:
                    ident = SessionIdentity.from_json(cursor.identity)
            elif cursor is not None and cursor.delivered and cursor.offset > 0:
                head, tail, available = probe(stream, cursor.offset)
                if (digest(head), digest(tail), available) == (
                    cursor.head,
                    cursor.tail,
                    cursor.offset,
                ):
                    start, ident = cursor.offset, SessionIdentity.from_json(cursor.identity)
                else:  # rewritten or truncated: read it again from the start
                    head, tail = b"", b""
                    stream.close()
                    stream = open_transcript(file.path)
            reader = JsonlReader(stream, start, head=head, tail=tail)
            self._read_from(file, st, reader, start, ident)
        finally:
            stream.close()

    def _read_from(
        self,
        file: TranscriptFile,
        st: os.stat_result,
        reader: JsonlReader,
        start: int,
        ident: SessionIdentity,
    ) -> None:
        task_reader = self._reader(file, st, ident)
        stopped = None
        try:
            for record in reader.records():
                task_reader.feed(record)
        except Exception as exc:  # a corrupt compressed stream, an I/O error mid-file
            stopped = f"stopped at byte {reader.offset}: {type(exc).__name__}: {exc}"
        task_reader.finish()
        if not ident.cwd and file.project:
            ident.cwd = file.project
        if file.tool == "copilot" and not ident.branch:
            ident.branch = self._copilot_branches.get(ident.session_id or "")
        if ident.session_id is None and file.tool != "codex":
            ident.session_id = _session_of_file(file)
        self.result.files_read += 1
        self.result.bytes_read += reader.offset - start
        self.result.skipped.extend(_line_skips(file.shown, reader.problems))
        if stopped:
            self.result.skipped.append(Skipped(file.shown, stopped, part="the rest"))

        left_out = self._wanted(ident)
        if left_out is None or ident.not_a_root:
            self.state.cursors[file.key] = Cursor(
                file.shown, st.st_size, st.st_mtime_ns, reader.offset,
                digest(reader.head), digest(reader.tail), True, ident.to_json(),
            )  # fmt: skip
        else:
            self.result.left_out[left_out] += 1
            self.state.cursors[file.key] = Cursor(
                file.shown, st.st_size, st.st_mtime_ns, 0, "", "", False, ident.to_json()
            )
        if left_out is None:
            self._deliver(file.tool, file.shown, ident, task_reader)

    def _reader(
        self, file: TranscriptFile, st: os.stat_result, ident: SessionIdentity
    ) -> TaskReader:
        if file.tool == "claude":
            return ClaudeTaskReader(ident, self.state.claude_uuids)
        if file.tool == "codex":
            return CodexTaskReader(ident, self._key_of, self._parent_keys)
        if file.tool == "pi":
            return pi_tasks.PiTaskReader(ident)
        if file.tool == "copilot":
            return copilot_tasks.CopilotTaskReader(ident)
        if file.tool == "vscode":
            return vscode_tasks.VSCodeTaskReader(ident)
        # Cursor records no times: its prompts are dated by the file's mtime.
        stamp = datetime.fromtimestamp(st.st_mtime_ns / 1e9, UTC).isoformat()
        return cursor_tasks.CursorTaskReader(ident, stamp.replace("+00:00", "Z"))

    def _deliver(
        self, tool: str, shown_file: str, ident: SessionIdentity, task_reader: TaskReader
    ) -> None:
        abandoned = task_reader.abandoned
        self.result.abandoned += abandoned
        if isinstance(task_reader, ClaudeTaskReader):
            self.state.claude_uuids |= task_reader.new_uuids
        elif tool == "codex" and ident.session_id:
            keys = self.state.codex_prompt_keys.setdefault(ident.session_id, [])
            keys.extend(self._key_of(t.text) for t in task_reader.tasks)
        tasks: list[Task] = []
        for task in task_reader.tasks:
            if self.options.since is not None:
                when = parse_timestamp(task.timestamp)
                if when is not None and when < self.options.since:
                    continue
            task = _clean_task(task)
            redacted, cut = self._redact_capped(task.text)
            for finding in redacted.findings:
                self.result.redactions[finding.kind] += 1
                self.result.shown.append(
                    RedactionShown(shown_file, finding.kind, finding.context, finding.hint)
                )
            tasks.append(
                Task(
                    redacted.text, task.timestamp, task.aborted, list(task.tools),
                    [self._redact(c).text for c in task.commands],
                    self._redact(task.answer).text if task.answer else "",
                    truncated=cut, interrupted=task.interrupted,
                    edits=self._clean_edits(task.edits),
                    reads=[r for r in task.reads if self._redact(r).text == r],
                )
            )  # fmt: skip
        if tasks:  # abandoned prompts alone are counted in the result, not a session
            self.result.sessions.append(
                Session(
                    tool, clean_text(ident.session_id or ""), clean_strings(ident.cwd),
                    clean_strings(ident.branch), shown_file, self._automation(ident), tasks,
                    clean_strings(list(ident.skills)), clean_strings(list(ident.skill_files)),
                    abandoned, commit=ident.commit,
                )
            )  # fmt: skip

    def _clean_edits(self, edits: list[dict]) -> list[dict]:
        """The turn's edits the redaction leaves as they are: one it would change is
        dropped whole (replayed, it would write the placeholder), and counted."""
        kept = []
        for edit in edits:
            texts = [v for v in edit.values() if isinstance(v, str)]
            findings = [f for t in texts for f in self.redactor.redact(t).findings]
            for finding in findings:
                self.result.redactions[finding.kind] += 1
            if not findings:
                kept.append(dict(edit))
        return kept

    def _forget_vanished(self, found: set[str]) -> None:
        """Drop the cursors of files that are gone from the roots scanned now (Claude's
        30-day cleanup deletes transcripts); cursors of other roots are kept."""
        prefixes = tuple(
            f"{shown(root.path)}::" if root.tool == "codex" else f"{shown(root.path)}{os.sep}"
            for root in self.result.roots
        )
        for key in list(self.state.cursors):
            if key.startswith(prefixes) and key not in found:
                del self.state.cursors[key]

    # -- all files ---------------------------------------------------------------------

    def run(self) -> HarvestResult:
        o = self.options
        environ = os.environ if o.environ is None else o.environ
        home = Path(environ.get("HOME") or Path.home()) if o.home is None else o.home
        self.result.roots = discover(
            claude_home=o.claude_home, codex_home=o.codex_home, environ=environ, home=home
        )
        self.result.roots += discover_more(
            **{name: getattr(o, name) for name in MORE_FLAGS}, environ=environ, home=home
        )
        for root in self.result.roots:
            if root.tool == "copilot" and (root.path / COPILOT_STORE).is_file():
                read_copilot_store(self, root)
        files: list[tuple[int, TranscriptFile, os.stat_result]] = []
        for root in self.result.roots:
            for file in root.sessions:
                try:
                    st = file.path.stat()
                except OSError as exc:
                    self.result.skipped.append(
                        Skipped(file.shown, f"cannot stat: {exc.strerror or exc}")
                    )
                    continue
                files.append((st.st_mtime_ns, file, st))
        self._forget_vanished({f.key for root in self.result.roots for f in root.sessions})
        files.sort(key=lambda item: (item[0], str(item[1].path)))
        for _mtime, file, st in files:
            try:
                self._read(file, st)
            except FileNotFoundError:
                self.result.skipped.append(Skipped(file.shown, "disappeared while reading"))
            except CompressedUnsupported as exc:
                self.result.skipped.append(Skipped(file.shown, str(exc)))
            except OSError as exc:
                self.result.skipped.append(
                    Skipped(file.shown, f"cannot read: {exc.strerror or exc}")
                )
        for root in self.result.roots:
            if root.tool == "opencode" and root.exists:
                read_opencode_store(self, root)
        return self.result


_WHOLE_FILE = {"pi", "vscode"}
assert pi_tasks.WHOLE_FILE and vscode_tasks.WHOLE_FILE
assert not (copilot_tasks.WHOLE_FILE or cursor_tasks.WHOLE_FILE)


def _clean_task(task: Task) -> Task:
    """The harvest boundary for text: whatever a reader took from a transcript (a nested
    JSON string too) leaves here writable as UTF-8, a lone surrogate as U+FFFD."""
    return replace(
        task,
        text=clean_text(task.text),
        tools=clean_strings(task.tools),
        commands=clean_strings(task.commands),
        answer=clean_text(task.answer),
        edits=clean_strings(task.edits),
        reads=clean_strings(task.reads),
    )


def _session_of_file(file: TranscriptFile) -> str:
    """A session id from the file's name when its records name none: Cursor's session
    folder, Copilot's session-state folder, else the file's stem."""
    if file.tool in ("cursor", "copilot") and file.path.parent.name not in (
        "agent-transcripts",
        "",
    ):
        return file.path.parent.name
    return file.path.stem


def harvest(
    options: HarvestOptions, *, before_commit: Callable[[HarvestResult], None] | None = None
) -> HarvestResult:
    """Run one harvest. Without `commit` it is a preview: the cursors are read, never
    moved. With `commit`, under the state directory's lock, `before_commit` is given the
    result first (a night freezes its tasks there) and the cursors are saved atomically
    only after it returns: a crash or an error before that keeps the previous cursors, so
    the next run reads the same new records again and nothing is lost."""
    check_state_dir(options.state_dir, writing=options.commit)
    check_roots(options.claude_home, options.codex_home)
    check_more_roots({flag: getattr(options, name) for name, flag in MORE_FLAGS.items()})
    job = Harvest(options)
    state_path = options.state_dir / STATE_FILE
    if not options.commit:
        job.state = HarvestState.load(state_path)
        return job.run()
    HarvestState.load(state_path)  # a malformed state is refused before the lock is made
    options.state_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(options.state_dir / LOCK_FILE)
    if not lock.acquire(timeout=2.0):
        pid = lock.holder_pid()
        raise HarvestBusy(
            f"another harvest is using {options.state_dir} (process {pid or 'unknown'}); "
            "wait for it to finish"
        )
    try:
        job.state = HarvestState.load(state_path)
        result = job.run()
        if before_commit is not None:
            before_commit(result)
        job.state.save(state_path)
        return result
    finally:
        lock.release()
