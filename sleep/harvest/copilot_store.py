"""Copilot CLI's `session-store.db` (SQLite, WAL), read-only: the sessions whose
`session-state/<id>/events.jsonl` is gone (deleted, or from a version that kept no log).

`sessions(id, cwd, repository, branch, …)` and `turns(session_id, turn_index,
user_message, assistant_response, timestamp)`: each turn's `user_message` is what the
person sent, `assistant_response` the reply (NULL when the call failed: the prompt is
`aborted`). The event log is the richer record (it tells print mode apart), so a session
that has one is read from it and only lends its recorded `branch` here. The cursor is
per session row: the last `turn_index` delivered.

What the store cannot say (1.0.102, checked on a real session that used the `task` tool):
a sub-agent writes no `turns` row, so its prompt is never mistaken for the person's, but
no table records tool calls or commands (`session_files` only lists files touched), so a
task read here has none, neither the main agent's nor a sub-agent's.
`assistant_usage_events` does mark a sub-agent's model calls (`initiator` 'sub-agent',
`agent_id`, `parent_tool_call_id`, `turn_index`), which tells that a turn delegated, not
what the sub-agent ran: nothing here uses it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import clean_text
from sleep.harvest.model import Task
from sleep.harvest.sqlite_snapshot import read_store

STORE = "session-store.db"


@dataclass
class StoreSessions:
    branches: dict[str, str] = field(default_factory=dict)  # session id -> branch
    sessions: list[tuple[SessionIdentity, list[Task], int]] = field(default_factory=list)
    rows: int = 0


def _text(value: object) -> str:
    return clean_text(value).strip() if isinstance(value, str) else ""


def read_store_sessions(
    db_path: Path, with_log: set[str], cursors: dict[str, dict]
) -> StoreSessions:
    """Branches of every session, and the new turns of those not in `with_log`, each as
    (identity, tasks, last turn index read)."""

    def query(db: sqlite3.Connection) -> StoreSessions:
        out = StoreSessions()
        rows = db.execute("SELECT id, cwd, branch FROM sessions ORDER BY created_at, id").fetchall()
        out.rows = len(rows)
        for sid, cwd, branch in rows:
            if isinstance(branch, str) and branch:
                out.branches[str(sid)] = clean_text(branch)
            if sid in with_log:
                continue
            cursor = cursors.get(sid) or {}
            after = cursor.get("turn", -1) if cursor.get("delivered") else -1
            turns = db.execute(
                "SELECT turn_index, user_message, assistant_response, timestamp FROM turns "
                "WHERE session_id = ? AND turn_index > ? ORDER BY turn_index",
                (sid, after),
            ).fetchall()
            if not turns:
                continue
            ident = SessionIdentity(session_id=clean_text(str(sid)))
            ident.cwd = _text(cwd) or None
            ident.branch = out.branches.get(str(sid))
            tasks = []
            for _index, user, reply, stamp in turns:
                text = _text(user)
                if not text:
                    continue
                task = Task(text, stamp if isinstance(stamp, str) else None)
                task.answer = _text(reply)[-4000:]
                task.aborted = not task.answer
                tasks.append(task)
            out.sessions.append((ident, tasks, turns[-1][0]))
        return out

    result, _copied = read_store(db_path, query)
    return result
