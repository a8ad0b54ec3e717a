"""One lock file per skills repo against concurrent operations.

The file `.git/skillopt.lock` holds the owner's pid (for the "busy" message); exclusion itself
is an `flock` on it (core.file_lock says why not an O_EXCL pid file). The file is left in
place (emptied) on release. Re-entrant within one RepoLock: nested operations of one
SkillsRepo share the lock.
"""

from __future__ import annotations

from pathlib import Path

from core.file_lock import FileLock
from core.skills_repo.errors import SkillsRepoBusy


class RepoLock:
    def __init__(self, path: Path):
        self.path = path
        self._lock = FileLock(path)
        self._depth = 0

    @property
    def held(self) -> bool:
        return self._lock.held

    def try_acquire(self) -> bool:
        if self._lock.held:
            self._depth += 1
            return True
        if not self._lock.try_acquire():
            return False
        self._depth = 1
        return True

    def acquire(self, wait: float = 0.0) -> None:
        """Take the lock; if another process holds it, retry for up to `wait` seconds, then
        raise SkillsRepoBusy."""
        if self._lock.held:
            self._depth += 1
            return
        if not self._lock.acquire(timeout=wait):
            raise self.busy_error()
        self._depth = 1

    def busy_error(self) -> SkillsRepoBusy:
        pid = self._lock.holder_pid() or "unknown"
        return SkillsRepoBusy(
            f"busy: another skillopt operation (pid {pid}) holds {self.path}; "
            "wait for it to finish and retry"
        )

    def release(self) -> None:
        if not self._lock.held:
            return
        self._depth -= 1
        if self._depth:
            return
        self._lock.release()

    def __enter__(self) -> RepoLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
