"""Mining replayable tasks from harvested prompts, without a model.

The heuristic reads each root session's prompts in order:
- short acknowledgements ("yes", "thanks", "continue") are not tasks: they accept the
  answer before them (it becomes the request's reference);
- a **correction** (sleep/mine/follow_up.py reads it from its structure: it refers back to
  the answer, pushes back on it and brings no new object of work; "no, use X", "did you
  run the tests?", "test?", "returning None … just hides it") is not a task of its own: it tells what a good answer to
  the request it corrects would have done, so it becomes that task's rubric, its checks
  where it is mechanical (sleep/mine/correction_checks.py) and one of its `corrections`. The
  request it corrects is the one the conversation is on: acknowledgements and short
  fragments ("fix it") between them never move it. A correction after an interrupted
  answer makes the interrupted request a task, with the correction as its rubric;
- every other prompt is a task, keyed by its **shape** (lowercased, numbers, paths and
  quoted strings abstracted), so the same request made in several sessions is one task
  with several sources. Recurring and corrected tasks come first when the night caps
  how many it replays;
- each task gets its kind (sleep/mine/kinds.py), the earlier turns a follow-up depends
  on, the constraints it states, what the person accepted and the verification commands
  the session ran (sleep/mine/evidence.py).
The input is the harvest's JSON shape (`skillopt sleep harvest --json`), texts already
redacted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sleep.harvest.file_edits import FileEdit, confined, confined_path, edit_problem, prior_edits
from sleep.mine.correction_checks import checks_for
from sleep.mine.evidence import (
    SessionTurns,
    constraint_note,
    constraints_in,
    is_follow_up,
    points_back,
    reference_of,
    verification_commands,
)
from sleep.mine.follow_up import (
    Before,
    Verdict,
    changes_of,
    correction_then_request,
    judge,
    redirected,
    stated_up_front,
)
from sleep.mine.judged_by import correction_note
from sleep.mine.kinds import TaskKind, kind_of
from sleep.mine.preferences import assign_preferences
from sleep.mine.structural_checks import structural_checks
from sleep.mine.tasks import (
    MAX_CORRECTION_CHARS,
    MAX_HISTORY_COMMANDS,
    MAX_READ_FILES,
    Check,
    Correction,
    FollowUp,
    MinedTask,
    Turn,
    stronger_kind,
    task_id,
)

ACKNOWLEDGEMENTS = frozenset(
    [
        "y",
        "yes",
        "yep",
        "ok",
        "okay",
        "k",
        "sure",
        "thanks",
        "thank",
        "you",
        "thx",
        "ty",
        "continue",
        "go",
        "on",
        "go",
        "ahead",
        "proceed",
        "do",
        "it",
        "lgtm",
        "great",
        "perfect",
        "nice",
        "cool",
        "done",
        "next",
    ]
)
MIN_TASK_CHARS = 12
MAX_INTENT_CHARS = 4000
# What the miner reads of one prompt: its shape is 16 words and its checks come from the
# first lines, so a pasted log of megabytes adds nothing but time.
MAX_MINED_CHARS = 16_000

_QUOTED = re.compile(r"(`[^`]*`|\"[^\"]*\"|'[^']{2,}')")
# Starts only where a path can start (not inside a word, except at a `~`) and never gives
# back a segment (`++`), so a long run of word characters is scanned once, not once per
# position: `(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+`, which finds the same paths, took 12 s
# on a 64 KB word.
_PATH = re.compile(r"(?:(?<![\w.-])|(?=~))(?:~|\.{1,2})?/?(?:[\w.-]++/)+[\w.-]++")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_WORDS = 16


def shape_of(text: str) -> str:
    """The request with its particulars abstracted: two prompts of one shape are one task."""
    s = text.lower()
    s = _QUOTED.sub("<str>", s)
    s = _PATH.sub("<path>", s)
    s = _NUMBER.sub("#", s)
    s = re.sub(r"[^\w<>#\s]", " ", s)
    return " ".join(s.split()[:_WORDS])


def is_acknowledgement(text: str) -> bool:
    words = re.sub(r"[^\w\s]", " ", text.lower()).split()
    return not words or (len(words) <= 3 and all(w in ACKNOWLEDGEMENTS for w in words))


@dataclass
class _Thread:
    """The request the conversation is on, with its latest answer waiting for the
    person's next word: an acknowledgement or a new request accepts that answer (it
    becomes the reference); a correction or a short fragment ("fix it") continues the
    thread, so a later correction still lands on this request."""

    task: MinedTask
    answer: str
    aborted: bool
    edits: list[FileEdit]
    accepted: str = ""  # the reference this session gave the task, until corrected
    said: str = ""  # the request and what the person added to it since, in this session
    changes: str = ""  # what its answers did (sleep/mine/follow_up.py `changes_of`)

    def before(self) -> Before:
        """What the next prompt can refer back to."""
        return Before(self.said or self.task.intent, self.answer, self.changes)

    def heard(self, text: str, verdict: Verdict) -> None:
        """A follow-up read against this request: why it was (not) attached is kept."""
        self.task.follow_ups.append(FollowUp(text[:MAX_CORRECTION_CHARS], verdict.correction,
                                             verdict.why))  # fmt: skip

    def accept(self) -> None:
        if self.aborted or self.task.reference:
            return
        self.task.reference = self.accepted = reference_of(self.answer, self.edits)

    def continue_with(
        self, answer: str, aborted: bool, edits: list[FileEdit], text: str = "", changes: str = ""
    ) -> None:
        """The next answer of the same request (after a fragment or a correction)."""
        if answer or edits:
            self.answer, self.edits = answer, edits
        self.aborted = aborted
        self.said = f"{self.said}\n{text}".strip()
        self.changes = f"{self.changes}\n{changes}".strip()

    def corrected(self) -> None:
        """The person corrected an answer they had acknowledged: it is no reference."""
        if self.accepted and self.task.reference == self.accepted:
            self.task.reference = self.accepted = ""


@dataclass
class _Stopped:
    """An interrupted request the person then redirected: a task once the correction comes."""

    text: str
    kind: TaskKind
    context: list[Turn]
    earlier: list[FileEdit]
    when: str | None
    index: int  # its place in the session
    prompt: dict[str, Any]  # as harvested (the files its turn read, before it was stopped)

    def before(self) -> Before:
        answer = str(self.prompt.get("answer") or "")
        return Before(self.text, answer, changes_of(self.prompt), interrupted=True)


# Where each prompt went: (session, the prompt's index in it) → the id of the task it
# asked, corrected or continued (sleep/mine/with_model.py builds on it).
Placed = dict[tuple[str, int], str]


def mine_sessions(
    sessions: Iterable[dict[str, Any]],
    *,
    include_automation: bool = False,
    placed: Placed | None = None,
) -> list[MinedTask]:
    """Tasks from harvested sessions (the harvest's JSON shape), most useful first;
    `placed`, when given, is filled with the task each prompt went to."""
    by_id: dict[str, MinedTask] = {}
    for session in sessions:
        if session.get("automation") and not include_automation:
            continue
        _mine_session(session, by_id, {} if placed is None else placed)
    for task in by_id.values():
        task.train_only = not task.has_evidence
    assign_preferences(list(by_id.values()))
    return sorted(by_id.values(), key=priority)


def _mine_session(session: dict[str, Any], by_id: dict[str, MinedTask], placed: Placed) -> None:
    project = session.get("cwd")
    sid = session_key(session)
    thread: _Thread | None = None
    stopped: _Stopped | None = None
    turns = SessionTurns()
    edits: list[list[FileEdit]] = []  # the session's file edits so far, turn by turn
    prompts = session.get("tasks", [])
    for index, prompt in enumerate(prompts):
        text = (prompt.get("text") or "")[:MAX_MINED_CHARS].strip()
        earlier = prior_edits(edits)
        turn_edits = edits_of_turn(prompt, project)
        edits.append(turn_edits)
        if not text:
            continue
        answer = prompt.get("answer") or ""
        aborted = bool(prompt.get("aborted"))
        commands = [c for c in prompt.get("commands", []) if isinstance(c, str)]
        tools = [t for t in prompt.get("tools", []) if isinstance(t, str)]
        when = prompt.get("timestamp")
        if prompt.get("interrupted"):
            # The person stopped it: not a task (sleep/mine/interrupted.py lists it as left
            # out) unless a correction says what they wanted of it instead; what follows
            # is not a correction of the request before it. Asking for something new
            # still accepted the answer before it (a stopped correction did not).
            if thread is not None and not judge(text, thread.before()).correction:
                thread.accept()
            stopped = None
            if redirected(prompts, index):
                # the turns it refers to: the latest only when it follows up on it (an
                # interrupted "explain how a photo ends up in a folder" was given the
                # unrelated exchange before it, emojis included, issue 37)
                context, agentic_before = turns.context_for(text, latest=is_follow_up(text))
                kind = kind_of(text, tools=tools, context_agentic=agentic_before, commands=commands)
                stopped = _Stopped(text, kind, context, earlier, when, index, prompt)
            turns.add(Turn(text, answer), False, new_thread=True)
            thread = None
            continue
        if is_acknowledgement(text):
            if thread is not None:
                thread.accept()
            continue
        before = stopped.before() if stopped is not None else thread.before() if thread else None
        mixed = correction_then_request(text, before) if before is not None else None
        verdict = judge(text, before) if before is not None and mixed is None else None
        if verdict is not None and verdict.correction:
            if stopped is not None:
                task = _task(by_id, project, stopped.text, stopped.kind, stopped.context,
                             stopped.earlier, session, sid, stopped.when)  # fmt: skip
                add_reads(task, stopped.prompt, project)
                thread = _Thread(task, "", False, [], said=stopped.text,
                                 changes=stopped.before().changes)  # fmt: skip
                placed[(sid, stopped.index)] = task.id
                stopped = None
            assert thread is not None
            thread.heard(text, verdict)
            _correct(thread, text, commands, sid, session, when)
            add_reads(thread.task, prompt, project)
            placed[(sid, index)] = thread.task.id
            thread.continue_with(answer, aborted, turn_edits, text, changes_of(prompt))
            turns.add(Turn(text, answer), thread.task.kind == "agentic")
            continue
        stopped = None
        if mixed is not None and thread is not None:
            # "thx. type hints from now on pls. next: add …": the head corrects the last
            # answer (which is then no reference), the rest is the next request.
            thread.heard(mixed[0], judge(mixed[0], thread.before()))
            _correct(thread, mixed[0], [], sid, session, when)
            thread = None
        if len(text) < MIN_TASK_CHARS:
            # "fix it": part of the request before it, never an acceptance of its answer
            if thread is not None:
                if verdict is not None:
                    why = f"a short fragment, part of the request: {verdict.why}"
                    thread.heard(text, Verdict(False, verdict.score, why))
                thread.continue_with(answer, aborted, turn_edits, text, changes_of(prompt))
                placed[(sid, index)] = thread.task.id
            turns.add(Turn(text, answer), thread is not None and thread.task.kind == "agentic")
            continue
        if thread is not None:
            if verdict is not None:
                thread.heard(text, verdict)
            thread.accept()  # the next request: the person moved on from that answer
        # one that points back ("does that function cope with unicode?") is shown the turn
        # it follows; only a follow-up's ("also …") takes its kind from it
        follows = is_follow_up(text)
        context, agentic_before = turns.context_for(text) if points_back(text) else ([], False)
        kind = kind_of(text, tools=tools, context_agentic=follows and agentic_before,
                       commands=commands)  # fmt: skip
        # the session's earlier edits are the project as it stood when this was asked,
        # whether or not the earlier turns are shown ("add a test for archive_old" right
        # after archive.py was written needs archive.py; issue 37)
        task = _task(by_id, project, text, kind, context, earlier, session, sid, when)
        verified = verification_commands(commands)
        for constraint in _constraints(text):
            note = constraint_note(constraint)
            if note not in task.rubric:
                task.rubric = f"{task.rubric}\n{note}".strip()
            _keep(task, Correction(constraint, sid, _agent(session), when))
            agentic = task.kind == "agentic"
            _add_checks(task, checks_for(constraint, agentic=agentic,
                                         commands_after=[c.value for c in verified]))  # fmt: skip
            _add_checks(task, structural_checks(constraint, None, agentic=agentic))
        _add_checks(task, verified)
        add_reads(task, prompt, project)
        thread = _Thread(task, answer, aborted, turn_edits, said=text, changes=changes_of(prompt))
        placed[(sid, index)] = task.id
        turns.add(Turn(text, answer), kind == "agentic", new_thread=True)


def _constraints(text: str) -> list[str]:
    """What a request states beside what it asks: its constraint clauses
    (sleep/mine/evidence.py) and a constraint heading it ("always add a test with the
    change - give report.py a daily_max(readings)")."""
    found = constraints_in(text)
    head = stated_up_front(text)
    if head and not any(head in c for c in found):
        # the head as stated, not the pieces of it a phrase found ("dont commit anything")
        found = [c for c in found if c not in head] + [head]
    return found


def session_key(session: dict[str, Any]) -> str:
    """A session as tasks name their sources: `<agent>:<session id>`."""
    return f"{session.get('source', '?')}:{session.get('session_id', '?')}"


def _task(
    by_id: dict[str, MinedTask],
    project: str | None,
    text: str,
    kind: TaskKind,
    context: list[Turn],
    earlier: list[FileEdit],
    session: dict[str, Any],
    sid: str,
    when: str | None,
) -> MinedTask:
    """The task for a request: new, or the one of the same shape seen before."""
    tid = task_id(project, shape_of(text))
    task = by_id.get(tid)
    if task is None:
        task = by_id[tid] = MinedTask(
            id=tid,
            intent=text[:MAX_INTENT_CHARS],
            project=project,
            kind=kind,
            first_seen=when,
            last_seen=when,
            branch=session.get("branch"),
            context=context,
            prior_edits=earlier,
            session_started=session_start(session),
            session_commit=session_commit(session),
        )
    else:
        task.kind = stronger_kind(task.kind, kind)
    if sid not in task.source_sessions:
        task.source_sessions.append(sid)
    task.occurrences = max(task.occurrences, len(task.source_sessions))
    if when and (task.last_seen is None or when > task.last_seen):
        task.last_seen = when
    return task


def _correct(
    thread: _Thread,
    text: str,
    commands: list[str],
    sid: str,
    session: dict[str, Any],
    when: str | None,
) -> None:
    """The correction becomes the rubric and checks of the request it corrects (those its
    code terms imply against what the answer did among them)."""
    thread.corrected()
    attach_correction(thread.task, text, commands, sid, session, when, before=thread.before())


def attach_correction(
    task: MinedTask,
    text: str,
    commands: list[str],
    sid: str,
    session: dict[str, Any],
    when: str | None,
    *,
    before: Before | None = None,
) -> None:
    """A correction in the request's task: a rubric line, its checks where it is
    mechanical (with `before`, the answer it corrects, also those its code terms imply,
    sleep/mine/structural_checks.py), and one of the task's `corrections` (the model miner
    attaches the ones it names the same way, sleep/mine/with_model.py)."""
    note = correction_note(text)
    if note not in task.rubric:
        task.rubric = f"{task.rubric}\n{note}".strip()
    verified = verification_commands(commands)
    agentic = task.kind == "agentic"
    found = checks_for(text, agentic=agentic, commands_after=[c.value for c in verified])
    if before is not None:
        found += structural_checks(text, before, agentic=agentic, besides=found)
    _add_checks(task, [*found, *verified])
    _keep(task, Correction(text[:MAX_CORRECTION_CHARS], sid, _agent(session), when))


def _agent(session: dict[str, Any]) -> str:
    return str(session.get("source") or "?")


def _keep(task: MinedTask, correction: Correction) -> None:
    if correction not in task.corrections:
        task.corrections.append(correction)


def _add_checks(task: MinedTask, checks: list[Check]) -> None:
    for check in checks:
        if check not in task.checks:
            task.checks.append(check)


def add_reads(task: MinedTask, prompt: dict[str, Any], cwd: str | None) -> None:
    """The files the turn read, each inside the session's folder (a chat replay of the
    task is given their content, sleep/night/read_files.py), and whether it read the
    project's git history and with which commands (its replay is given it up to its
    start: sleep/night/history.py)."""
    commands = prompt.get("commands", [])
    for command in commands:
        if isinstance(command, str) and reads_history(command):
            task.reads_history = True
            kept = task.history_commands
            if command not in kept and len(kept) < MAX_HISTORY_COMMANDS:
                kept.append(command)
    for recorded in prompt.get("reads", []):
        path = confined_path(recorded, cwd) if isinstance(recorded, str) else None
        if path and path not in task.read_files and len(task.read_files) < MAX_READ_FILES:
            task.read_files.append(path)


_HISTORY = re.compile(
    r"\bgit\s+(?:-C\s+\S+\s+)?(?:log|shortlog|whatchanged|reflog|rev-list|blame|show\b(?!-)"
    r"|diff\s+[^|;&]*(?:HEAD[~^]|@\{|\.\.))"
)


def reads_history(command: str) -> bool:
    """A shell command that reads the git history (a replay workspace has none)."""
    return bool(_HISTORY.search(command))


def session_commit(session: dict[str, Any]) -> str | None:
    """The commit the session recorded at its start (Codex), when it is a full hash."""
    commit = session.get("commit")
    return commit if isinstance(commit, str) and len(commit) == 40 else None


def session_start(session: dict[str, Any]) -> str | None:
    """When the session began: its earliest prompt time (None when none is recorded)."""
    stamps = [p.get("timestamp") for p in session.get("tasks", [])]
    return min((s for s in stamps if isinstance(s, str) and s), default=None)


def edits_of_turn(prompt: dict[str, Any], cwd: str | None) -> list[FileEdit]:
    """A prompt's recorded edits, each confined to the session's folder (one whose path
    leaves it is not kept: the replay never writes outside its copy)."""
    out = []
    for data in prompt.get("edits", []):
        if edit_problem(data):
            continue
        edit = confined(FileEdit.from_dict(data), cwd)
        if edit is not None:
            out.append(edit)
    return out


def priority(task: MinedTask) -> tuple:
    """Recurring first, then corrected ones, then the most recent; the id breaks ties."""
    return (-task.occurrences, -len(task.checks) - bool(task.rubric), _neg(task.last_seen), task.id)


def _neg(stamp: str | None) -> tuple:
    # ISO timestamps sort as text; invert for "most recent first" without parsing.
    return tuple(-ord(c) for c in (stamp or ""))
