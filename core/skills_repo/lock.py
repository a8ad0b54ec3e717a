"""One lock file per skills repo against concurrent operations.

The file `.git/skillopt.lock` holds the owner's pid (for the "busy" message); exclusion itself
is an `flock` on it. Why not O_EXCL create/unlink: clearing a stale lock left by a dead
process is then racy (two newcomers may both unlink and recreate it), while the kernel drops
an flock the moment its owner dies, so a stale lock clears itself and no one ever unlinks
another process's lock. The file is left in place (emptied) on release for the same reason.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from core.skills_repo.errors import SkillsRepoBusy


class RepoLock:
    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None
        self._depth = 0

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            self._depth += 1
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd, self._depth = fd, 1
        return True

    def acquire(self, wait: float = 0.0) -> None:
        """Take the lock; if another process holds it, retry for up to `wait` seconds, then
        raise SkillsRepoBusy."""
        deadline = time.monotonic() + wait
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise self.busy_error()
            time.sleep(0.05)

    def busy_error(self) -> SkillsRepoBusy:
        try:
            pid = self.path.read_text().strip() or "unknown"
        except OSError:
            pid = "unknown"
        return SkillsRepoBusy(
            f"busy: another skillopt operation (pid {pid}) holds {self.path}; "
            "wait for it to finish and retry"
        )

    def release(self) -> None:
        if self._fd is None:
            return
        self._depth -= 1
        if self._depth:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> RepoLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
