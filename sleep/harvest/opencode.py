"""The user tasks in OpenCode's SQLite store (`opencode.db`, WAL mode), read-only.

Tables: `session(id, parent_id, directory, permission, revert, time_updated, …)`,
`message(id, session_id, time_created, data)`, `part(id, message_id, session_id,
time_created, data)`, `data` JSON, times in epoch milliseconds. A user message's prompt
is its `text` parts that are not `synthetic` or `ignored`; the assistant messages after
it (and their `tool` parts, older `tool-invocation`) are its answer; an assistant message
whose data has `error` makes the prompt `aborted`. A `tool` part's `state` is the call's
outcome: the file edits of an `edit` / `write` / `apply_patch` call whose status is
`completed` are kept for a follow-up (sleep/harvest/edit_tools.py). Messages at or after a session's
`revert.messageID` were undone in the TUI: not tasks, and the cursor stops before them.

A session with `parent_id` is a sub-agent (its prompts are written by a model). A session
whose `permission` denies `question` and `plan_enter` was made by `opencode run` (print
mode, 1.18.33): automation; its prompts are unquoted (run_prompt). The project is
`session.directory`.

The cursor is per session row: `time_updated` (unchanged = not read again) and the last
message delivered (`time_created`, `id`), so a second harvest queries only newer messages.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sleep.harvest.edit_tools import no_edits, opencode_edits
from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import clean_text
from sleep.harvest.model import Task
from sleep.harvest.session_evidence import claude_assistant
from sleep.harvest.sqlite_snapshot import read_store

RUN_DENIES = {"question", "plan_enter"}


@dataclass
class StoreSession:
    identity: SessionIdentity
    updated: int
    tasks: list[Task] = field(default_factory=list)
    last: tuple[int, str] | None = None  # the last message read, for the cursor
    malformed: int = 0  # message and part rows not in OpenCode's shape, skipped


def _json(text: Any) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# The fields a part's reader takes as text, and where (one of another type is a bad row).
_TEXT_FIELDS = ("text", "tool", "toolName")


def _part_shape_ok(part: dict) -> bool:
    """A part row as OpenCode writes it: a JSON object whose text fields are text (or
    absent) and whose nested objects are objects. `{"type": "text", "text": {"a": 1}}`
    is not: it is skipped and counted, and the rest of the session is harvested."""
    if not part or not isinstance(part.get("type", ""), str):
        return False
    if any(not isinstance(part.get(k, ""), str | None) for k in _TEXT_FIELDS):
        return False
    return all(isinstance(part.get(k) or {}, dict) for k in ("state", "toolInvocation"))


def _stamp(ms: Any) -> str | None:
    if not isinstance(ms, int):
        return None
    return (
        datetime.fromtimestamp(ms / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def print_mode(permission: Any) -> bool:
    try:
        rules = json.loads(permission) if isinstance(permission, str) else None
    except ValueError:
        return False
    denied = {
        r.get("permission")
        for r in rules or []
        if isinstance(r, dict) and r.get("action") == "deny" and r.get("pattern") == "*"
    }
    return denied >= RUN_DENIES


def run_prompt(text: str) -> str:
    """The words given to `opencode run`, which records them joined, each one with a space
    quoted (`"…"`, its quotes as `\\"`): the usual single quoted argument comes back as
    typed (quoted, every prompt would mine as the one shape `<str>`)."""
    inner = text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in inner.replace('\\"', ""):
        return inner.replace('\\"', '"')
    return text


def _assistant_parts(task: Task, parts: list[dict]) -> None:
    for part in parts:
        kind = part.get("type")
        if kind == "text" and not part.get("synthetic"):
            claude_assistant(task, [{"type": "text", "text": part.get("text") or ""}])
        elif kind == "tool":
            state = part.get("state") if isinstance(part.get("state"), dict) else {}
            call = {"type": "tool_use", "name": part.get("tool"), "input": state.get("input")}
            # a call that failed, or was cut off before it ended, changed nothing we know of
            done = state.get("status") == "completed"
            claude_assistant(task, [call], opencode_edits if done else no_edits)
        elif kind == "tool-invocation":  # older parts: their outcome is not known, so no edits
            call = (
                part.get("toolInvocation") if isinstance(part.get("toolInvocation"), dict) else {}
            )
            name = call.get("toolName") or part.get("toolName")
            block = {"type": "tool_use", "name": name, "input": call.get("args")}
            claude_assistant(task, [block], no_edits)


@dataclass
class StoreRead:
    sessions: list[StoreSession]  # sessions changed since their cursors
    rows: int  # every session row
    subagents: int  # rows with a parent
    copied: bool  # read from a private snapshot (the live file was locked)

    @property
    def malformed(self) -> int:
        return sum(s.malformed for s in self.sessions)


def read_sessions(
    db_path: Path,
    cursors: dict[str, dict[str, Any]],
    left_out: Callable[[SessionIdentity], str | None],
) -> StoreRead:
    """The sessions whose row changed since its cursor ({"updated", "t", "id",
    "delivered"}). Messages are read only for the sessions delivered: a sub-agent, or one
    `left_out` gives a reason for (another project, automation), comes back without them."""

    def query(db: sqlite3.Connection) -> StoreRead:
        rows = db.execute(
            "SELECT id, parent_id, directory, permission, revert, time_updated FROM session "
            "ORDER BY time_created, id"
        ).fetchall()
        out = StoreRead([], len(rows), sum(1 for r in rows if r[1]), False)
        for sid, parent, directory, permission, revert, updated in rows:
            cursor = cursors.get(sid) or {}
            if cursor.get("updated") == updated and cursor.get("delivered"):
                continue
            ident = SessionIdentity(session_id=clean_text(str(sid)))
            ident.cwd = clean_text(directory) if isinstance(directory, str) and directory else None
            ident.automation = print_mode(permission)
            if parent:
                ident.not_a_root = "subagent"
            session = StoreSession(ident, updated if isinstance(updated, int) else 0)
            if left_out(ident) is None:
                delivered = cursor.get("delivered")
                start = (cursor.get("t", -1), cursor.get("id", "")) if delivered else (-1, "")
                _read_messages(db, session, start, _json(revert).get("messageID"))
            out.sessions.append(session)
        return out

    found, copied = read_store(db_path, query)
    found.copied = copied
    return found


def _read_messages(
    db: sqlite3.Connection, session: StoreSession, start: tuple[int, str], revert: Any
) -> None:
    sid = session.identity.session_id
    messages = db.execute(
        "SELECT id, time_created, data FROM message WHERE session_id = ? AND "
        "(time_created > ? OR (time_created = ? AND id > ?)) ORDER BY time_created, id",
        (sid, start[0], start[0], start[1]),
    ).fetchall()
    parts: dict[str, list[dict]] = {}
    for mid, data in db.execute(
        "SELECT p.message_id, p.data FROM part p JOIN message m ON m.id = p.message_id "
        "WHERE p.session_id = ? AND (m.time_created > ? OR (m.time_created = ? AND m.id > ?)) "
        "ORDER BY p.time_created, p.id",
        (sid, start[0], start[0], start[1]),
    ):
        part = _json(data)
        if _part_shape_ok(part):
            parts.setdefault(mid, []).append(part)
        else:
            session.malformed += 1
    current: Task | None = None
    for mid, created, data in messages:
        if isinstance(revert, str) and mid >= revert:
            break  # undone in the TUI (ids grow with time): stop before it
        info = _json(data)
        if not info:
            session.malformed += 1
        role = info.get("role")
        if role == "user":
            text = "\n".join(
                p.get("text") or ""
                for p in parts.get(mid, [])
                if p.get("type") == "text" and not p.get("synthetic") and not p.get("ignored")
            )
            text = clean_text(text).strip()
            text = run_prompt(text) if session.identity.automation else text
            if text:
                current = Task(text, _stamp(created))
                session.tasks.append(current)
        elif role == "assistant" and current is not None:
            _assistant_parts(current, parts.get(mid, []))
            if info.get("error"):
                current.aborted = True
        session.last = (created, mid)
