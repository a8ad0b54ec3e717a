"""One browser session at a time may write (adopt, reject, roll back, start or stop runs).

textual-serve starts one app process per browser session, so the sessions share no memory:
they share a lock file instead (core.file_lock). The first app process that takes it is
the writer until it exits; the kernel drops the lock when the process dies however it
dies (closed tab, kill -9), so a stale writer never locks the others out. Every later
session finds the lock taken and runs read-only. No textual import: the CLI reads it first.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.file_lock import FileLock, read_pid

LOCK_ENV = "SKILLOPT_WEB_WRITER_LOCK"  # set by the web server for the app processes it starts

_held: list[FileLock] = []  # the writer's lock stays open for the life of the process


def claim_writer(path: Path) -> str | None:
    """Take the writer's lock at `path`; None when this process is the writer, else the
    sentence a read-only session shows (naming the writer's process, for whoever wonders
    which tab it is)."""
    lock = FileLock(path)
    if lock.try_acquire():
        _held.append(lock)
        return None
    holder = read_pid(path)
    who = f" (session {holder})" if holder else ""
    return (
        f"Read-only: another browser session{who} drives the writes (adopt, reject, "
        "rollback, runs). Close it, then reload this page to drive them here."
    )


def web_session_read_only() -> str | None:
    """For `skillopt tui` started by the web server: the read-only sentence, or None when
    this session writes (or when it is not a web session at all)."""
    path = os.environ.get(LOCK_ENV)
    return claim_writer(Path(path)) if path else None
