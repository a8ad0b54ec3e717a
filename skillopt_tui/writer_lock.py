"""One `skillopt tui` at a time may write to a skills repository (adopt, reject, roll back,
start or stop runs), whichever face it has: a terminal, or a browser session of any
`tui --web` server (textual-serve runs one app process per session, and they share no
memory).

They share a lock file (core.file_lock) in the skills repository's git directory, so two
web servers on one repository, or a web session and a terminal, find each other. The first
app process that takes it is the writer until it exits; the kernel drops the lock when the
process dies however it dies (closed tab, kill -9), so a stale writer never locks the
others out, and nothing is left to clean. Every later app runs read-only. Without a skills
repository the lock is in Sleep's state directory when there is one (the runs and nights
it starts are the writes left); none is created for it.
No textual import: the CLI reads it first.
"""

from __future__ import annotations

from pathlib import Path

from core.file_lock import FileLock, read_pid
from core.skills_repo.errors import SkillsRepoError
from core.skills_repo.plumbing import RepoCore

LOCK_NAME = "skillopt-tui-writer.lock"

_held: list[FileLock] = []  # the writer's lock stays open for the life of the process


def writer_lock_path(skills_repo: Path | None, state_dir: Path) -> Path:
    """Where the writers of `skills_repo` meet: its git directory (shared by every
    checkout path that names it), else the state directory."""
    if skills_repo is not None:
        try:
            _, git_dir = RepoCore._locate(skills_repo)
            return git_dir / LOCK_NAME
        except (SkillsRepoError, OSError):
            pass  # not a repository (yet): the app says so; its runs still need one writer
    return state_dir / LOCK_NAME


def claim_writer(path: Path) -> str | None:
    """Take the writer's lock at `path`; None when this process is the writer, else the
    sentence a read-only app shows (naming the writer's process, for whoever wonders
    which window or tab it is). A lock that cannot be made (its folder does not exist, a
    read-only disk) leaves this process the writer: nothing is created to hold it, and
    its writes fail on their own, with their own message."""
    lock = FileLock(path)
    try:
        taken = lock.try_acquire()
    except OSError:  # no such folder (no Sleep state yet), a read-only disk
        return None
    if taken:
        _held.append(lock)
        return None
    holder = read_pid(path)
    who = f" (process {holder})" if holder else ""
    return (
        f"Read-only: another SkillOpt window or browser session{who} drives the writes "
        "(adopt, reject, rollback, runs). Close it, then reopen or reload this one to "
        "drive them here."
    )


def claim_tui_writer(skills_repo: Path | None, state_dir: Path) -> str | None:
    """For `skillopt tui` (terminal or web session): None when this app writes, else the
    read-only sentence."""
    return claim_writer(writer_lock_path(skills_repo, state_dir))
