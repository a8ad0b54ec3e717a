"""An exclusive lock between processes: an `flock` on a lock file that names its holder.

Why flock and not an O_EXCL pid file: with a pid file, a lock left by a dead process
(kill -9, power loss) must be cleared by someone, and clearing it is racy (two newcomers
both see it stale, both unlink and recreate it, both "own" it); an empty file whose pid is
not written yet looks unowned; and a pid from another host cannot be checked at all. The
kernel drops an flock the moment its holder dies, so a stale lock clears itself and
"is this lock held" is answered by trying to take it, never by guessing from a pid.

The pid written into the file serves only messages ("in use by process N").

flock locks belong to an open file description, so two FileLock objects exclude each other
even inside one process. A lock opened by this process is not inherited by programs it
runs (Python opens files close-on-exec), but a bare `fork()` child shares it.

With `remove_on_release` the holder unlinks the file while still holding the lock; a
newcomer that locked the unlinked file in between sees that the path no longer names the
file it locked and starts over, so removal never lets two holders in.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

POLL_S = 0.05


class FileLock:
    """Not re-entrant: taking a lock this object already holds fails like any other
    holder would make it fail."""

    def __init__(self, path: str | Path, *, remove_on_release: bool = False) -> None:
        self.path = Path(path)
        self.remove_on_release = remove_on_release
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if no process holds it; never waits."""
        if self._fd is not None:
            return False
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            if _names(self.path, fd):
                break
            os.close(fd)  # locked a file its holder removed meanwhile: lock the new one
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return True

    def acquire(self, timeout: float = 0.0) -> bool:
        """Take the lock, waiting up to `timeout` seconds for its holder; False if it is
        still held then."""
        deadline = time.monotonic() + timeout
        while not self.try_acquire():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(POLL_S, left))
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if self.remove_on_release and _names(self.path, fd):
                self.path.unlink()
            else:
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # drops the flock

    def holder_pid(self) -> int | None:
        return holder_pid(self.path)


def _names(path: Path, fd: int) -> bool:
    """Whether `path` still names the open file `fd`."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def is_held(path: str | Path) -> bool:
    """Whether some process (this one included) holds the lock on `path`.

    The probe takes a shared lock for an instant: probes never see each other as holders,
    but a FileLock taken at that very instant fails, so takers that may race a probe wait
    a moment (`acquire(timeout=...)`). Never creates the file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def read_pid(path: str | Path) -> int | None:
    """The pid written in the lock file, or None (no file, empty, or not a pid)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    first = text.split(maxsplit=1)[:1]
    try:
        return int(first[0]) if first else None
    except ValueError:
        return None


def _running(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


def holder_pid(path: str | Path, settle: float = 0.5) -> int | None:
    """The pid of the process holding the lock on `path`; None when no process holds it;
    0 when one does but has not written its pid within `settle` seconds (a holder writes
    it right after taking the lock, so this only happens to a stopped or frozen one).

    Right after a holder takes a lock its previous holder died with, the file still names
    the dead process for an instant: a pid that is not running is not an answer yet."""
    deadline = time.monotonic() + settle
    while is_held(path):
        pid = read_pid(path)
        if pid is not None and _running(pid):
            return pid
        if time.monotonic() >= deadline:
            return 0
        time.sleep(0.01)
    return None
