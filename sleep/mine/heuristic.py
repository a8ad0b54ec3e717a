"""Mining replayable tasks from harvested prompts, without a model.

The heuristic reads each root session's prompts in order:
- short acknowledgements ("yes", "thanks", "continue") are not tasks;
- a **correction** ("no, use X", "don't use Y", "X instead of Y") is not a task of its
  own: it tells what a good answer to the *previous* request would have done, so it
  becomes that task's rubric, and its "use X" / "not Y" become literal checks;
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

from sleep.harvest.file_edits import FileEdit, confined, edit_problem, prior_edits
from sleep.mine.evidence import (
    bounded_context,
    constraint_rubric,
    is_follow_up,
    reference_of,
    verification_commands,
)
from sleep.mine.judged_by import correction_note
from sleep.mine.kinds import kind_of
from sleep.mine.tasks import Check, MinedTask, Turn, stronger_kind, task_id

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

_CORRECTION_START = re.compile(
    r"^\s*(no\b|nope\b|not quite\b|wrong\b|that'?s wrong|don'?t\b|do not\b|stop\b|"
    r"instead\b|actually\b|please don'?t\b|never\b)",
    re.IGNORECASE,
)
_USE = re.compile(r"\buse\s+[`'\"]?([\w./:@+-]{2,60})", re.IGNORECASE)
_INSTEAD_OF = re.compile(r"\binstead of\s+[`'\"]?([\w./:@+-]{2,60})", re.IGNORECASE)
_DONT_USE = re.compile(
    r"\b(?:don'?t|do not|never|stop)\s+(?:use|using)\s+[`'\"]?([\w./:@+-]{2,60})", re.IGNORECASE
)
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


def is_correction(text: str) -> bool:
    return bool(_CORRECTION_START.match(text)) or bool(_INSTEAD_OF.search(text))


def checks_from_correction(text: str) -> list[Check]:
    avoid = {m.group(1).strip("`'\".,") for m in _INSTEAD_OF.finditer(text)}
    avoid |= {m.group(1).strip("`'\".,") for m in _DONT_USE.finditer(text)}
    use = {m.group(1).strip("`'\".,") for m in _USE.finditer(text)} - avoid
    checks = [Check("contains", v) for v in sorted(use) if v]
    checks += [Check("not_contains", v) for v in sorted(avoid) if v]
    return checks


@dataclass
class _Waiting:
    """A task's latest answer, waiting for the person's next word: an acknowledgement or
    a new request accepts it (it becomes the reference); a correction replaces it."""

    task: MinedTask
    answer: str
    aborted: bool

    def accept(self) -> None:
        if self.answer and not self.aborted and not self.task.reference:
            self.task.reference = reference_of(self.answer)


def mine_sessions(
    sessions: Iterable[dict[str, Any]], *, include_automation: bool = False
) -> list[MinedTask]:
    """Tasks from harvested sessions (the harvest's JSON shape), most useful first."""
    by_id: dict[str, MinedTask] = {}
    for session in sessions:
        if session.get("automation") and not include_automation:
            continue
        _mine_session(session, by_id)
    for task in by_id.values():
        task.train_only = not task.has_evidence
    return sorted(by_id.values(), key=priority)


def _mine_session(session: dict[str, Any], by_id: dict[str, MinedTask]) -> None:
    project = session.get("cwd")
    sid = f"{session.get('source', '?')}:{session.get('session_id', '?')}"
    previous: MinedTask | None = None
    waiting: _Waiting | None = None
    turns: list[tuple[Turn, bool]] = []  # the session so far, and whether each was agentic
    edits: list[list[FileEdit]] = []  # the session's file edits so far, turn by turn
    for prompt in session.get("tasks", []):
        text = (prompt.get("text") or "")[:MAX_MINED_CHARS].strip()
        earlier = prior_edits(edits)
        edits.append(_turn_edits(prompt, project))
        if not text:
            continue
        answer = prompt.get("answer") or ""
        aborted = bool(prompt.get("aborted"))
        commands = [c for c in prompt.get("commands", []) if isinstance(c, str)]
        if prompt.get("interrupted"):
            # The person stopped it: not a task (sleep/mine/interrupted.py lists it as left
            # out), and what follows is not a correction of the request before it. Asking
            # for something new still accepted the answer before it (a stopped correction
            # did not).
            if waiting is not None and not is_correction(text):
                waiting.accept()
            turns.append((Turn(text, answer), False))
            previous = waiting = None
            continue
        if is_acknowledgement(text):
            if waiting is not None:
                waiting.accept()
            waiting = None
            continue
        if previous is not None and is_correction(text):
            note = correction_note(text)
            if note not in previous.rubric:
                previous.rubric = f"{previous.rubric}\n{note}".strip()
            for check in [*checks_from_correction(text), *verification_commands(commands)]:
                if check not in previous.checks:
                    previous.checks.append(check)
            waiting = _Waiting(previous, answer, aborted)
            turns.append((Turn(text, answer), previous.kind == "agentic"))
            continue
        if waiting is not None:
            waiting.accept()  # the next request: the person moved on from that answer
        waiting = None
        tools = [t for t in prompt.get("tools", []) if isinstance(t, str)]
        context = bounded_context([t for t, _a in turns]) if is_follow_up(text) else []
        agentic_before = any(a for _t, a in turns[-len(context) :]) if context else False
        kind = kind_of(text, tools=tools, context_agentic=agentic_before)
        turns.append((Turn(text, answer), kind == "agentic"))
        if len(text) < MIN_TASK_CHARS:
            continue
        shape = shape_of(text)
        tid = task_id(project, shape)
        when = prompt.get("timestamp")
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
                prior_edits=earlier if context else [],
            )
        else:
            task.kind = stronger_kind(task.kind, kind)
        constraints = constraint_rubric(text)
        if constraints and constraints not in task.rubric:
            task.rubric = f"{task.rubric}\n{constraints}".strip()
        for check in verification_commands(commands):
            if check not in task.checks:
                task.checks.append(check)
        if sid not in task.source_sessions:
            task.source_sessions.append(sid)
        task.occurrences = max(task.occurrences, len(task.source_sessions))
        if when and (task.last_seen is None or when > task.last_seen):
            task.last_seen = when
        previous = task
        waiting = _Waiting(task, answer, aborted)


def _turn_edits(prompt: dict[str, Any], cwd: str | None) -> list[FileEdit]:
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
