"""The harvest's database stores: Copilot CLI's session-store.db and OpenCode's
opencode.db. Each is read read-only (sleep/harvest/sqlite_snapshot.py) with a cursor per session
row in `HarvestState.rows`; their sessions are named `<db>::<session id>` and delivered
through the same redaction as the transcript files'."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Protocol

from core.path_text import shown
from sleep.harvest.copilot_store import STORE as COPILOT_STORE
from sleep.harvest.copilot_store import read_store_sessions
from sleep.harvest.model import Skipped, Task
from sleep.harvest.opencode import read_sessions
from sleep.harvest.sources import SourceRoot


class Harvest(Protocol):
    """What a store reader uses of sleep.harvest.run.Harvest (a Protocol: harvest imports this
    module, so this module must not import harvest)."""

    state: Any
    result: Any
    _copilot_branches: Any

    def _wanted(self, ident: Any) -> str | None: ...

    def _deliver(self, source: str, name: str, ident: Any, reader: Any) -> None: ...


@dataclass
class StoreTasks:
    """A store's session in the shape `Harvest._deliver` takes from a file's task reader."""

    tasks: list[Task]
    abandoned: int = 0


def read_copilot_store(job: Harvest, root: SourceRoot) -> None:
    """Sessions of Copilot's store with no event log left, and every session's branch."""
    db_path = root.path / COPILOT_STORE
    db = shown(db_path)
    cursors = job.state.rows.setdefault(db, {})
    with_log = {f.path.parent.name for f in root.sessions}
    try:
        found = read_store_sessions(db_path, with_log, cursors)
    except (sqlite3.Error, OSError) as exc:
        job.result.skipped.append(Skipped(db, f"cannot read the store: {exc}"))
        return
    job._copilot_branches = found.branches
    root.store_sessions = found.rows
    for ident, tasks, last_turn in found.sessions:
        sid = ident.session_id or ""
        left_out = job._wanted(ident)
        if left_out is None:
            cursors[sid] = {"turn": last_turn, "delivered": True}
            job._deliver("copilot", f"{db}::{sid}", ident, StoreTasks(tasks))
        else:
            job.result.left_out[left_out] += 1
            cursors[sid] = {"delivered": False}


def read_opencode_store(job: Harvest, root: SourceRoot) -> None:
    db = shown(root.path)
    cursors = job.state.rows.setdefault(db, {})
    try:
        read = read_sessions(root.path, cursors, job._wanted)
    except (sqlite3.Error, OSError) as exc:
        job.result.skipped.append(Skipped(db, f"cannot read the store: {exc}"))
        return
    job.result.files_read += 1
    root.store_sessions, root.subagent_files = read.rows, read.subagents
    if read.malformed:
        rows = f"{read.malformed} row" + ("s" if read.malformed > 1 else "")
        job.result.skipped.append(Skipped(db, "not in OpenCode's shape", rows))
    for found in read.sessions:
        ident = found.identity
        sid = ident.session_id or ""
        old = cursors.get(sid) or {}
        left_out = job._wanted(ident)
        if left_out is None or ident.not_a_root:
            last = found.last or (old.get("t", -1), old.get("id", ""))
            cursors[sid] = {"updated": found.updated, "t": last[0], "id": last[1],
                            "delivered": True}  # fmt: skip
        else:
            job.result.left_out[left_out] += 1
            cursors[sid] = {"updated": found.updated, "delivered": False}
        if left_out is None:
            reader = StoreTasks(found.tasks)
            job._deliver("opencode", f"{db}::{sid}", ident, reader)
