"""The shared flock-based lock: exclusion (even inside one process), the pid for messages,
the probe, a self-clearing lock when the holder dies, and removal that never lets two
holders in."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading

from core import file_lock
from core.file_lock import FileLock, holder_pid, is_held, read_pid


def test_two_locks_on_one_file_exclude_each_other_even_in_one_process(tmp_path):
    path = tmp_path / "x.lock"
    first, second = FileLock(path), FileLock(path)
    assert first.try_acquire()
    assert not second.try_acquire()
    assert not first.try_acquire()  # not re-entrant
    assert read_pid(path) == os.getpid()
    assert holder_pid(path) == os.getpid()
    first.release()
    assert path.read_text() == ""  # kept, emptied
    assert holder_pid(path) is None
    assert second.try_acquire()
    second.release()


def test_remove_on_release_deletes_the_file(tmp_path):
    path = tmp_path / "x.lock"
    lock = FileLock(path, remove_on_release=True)
    assert lock.try_acquire()
    lock.release()
    assert not path.exists()
    assert not is_held(path) and holder_pid(path) is None


def test_acquire_waits_for_the_holder_within_its_timeout(tmp_path):
    path = tmp_path / "x.lock"
    holder, waiter = FileLock(path), FileLock(path)
    assert holder.try_acquire()
    assert not waiter.acquire(timeout=0.0)
    releaser = threading.Timer(0.2, holder.release)
    releaser.start()
    try:
        assert waiter.acquire(timeout=60.0)
    finally:
        releaser.join()
    assert waiter.held and not holder.held
    waiter.release()


def test_lock_of_a_killed_holder_clears_itself(tmp_path):
    path = tmp_path / "x.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]);"
            "from core.file_lock import FileLock; FileLock(sys.argv[2]).try_acquire();"
            "print('locked', flush=True); sys.stdin.read()",
            os.getcwd(),
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert holder_pid(path) == holder.pid
        assert not FileLock(path).try_acquire()
    finally:
        holder.kill()
        holder.wait()
    assert read_pid(path) == holder.pid  # the dead holder's pid is still written...
    assert holder_pid(path) is None  # ...but nobody holds the lock
    lock = FileLock(path)
    assert lock.try_acquire()
    lock.release()


def test_a_holder_that_has_not_written_its_pid_is_still_a_holder(tmp_path):
    path = tmp_path / "x.lock"
    path.write_text("")
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # taken, pid not written yet
    try:
        assert is_held(path)
        assert holder_pid(path, settle=0.0) == 0
        assert not FileLock(path).try_acquire()
    finally:
        os.close(fd)


def test_probes_do_not_see_each_other_and_do_not_create_the_file(tmp_path):
    path = tmp_path / "x.lock"
    assert not is_held(path) and not path.exists()
    path.write_text("")
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)  # another probe, mid-probe
    try:
        assert not is_held(path)
    finally:
        os.close(fd)


class _ReleaseBetweenOpenAndLock:
    """fcntl stand-in: just before `victim` takes its lock, the current holder releases
    (and so removes) the file `victim` has already opened."""

    def __init__(self, holder: FileLock) -> None:
        self.holder = holder
        self.fired = False

    def flock(self, fd: int, op: int) -> None:
        if not self.fired and op & fcntl.LOCK_EX:
            self.fired = True
            self.holder.release()
        fcntl.flock(fd, op)

    def __getattr__(self, name: str):
        return getattr(fcntl, name)


def test_removal_never_lets_two_holders_in(tmp_path, monkeypatch):
    path = tmp_path / "x.lock"
    holder = FileLock(path, remove_on_release=True)
    assert holder.try_acquire()
    late = FileLock(path, remove_on_release=True)
    monkeypatch.setattr(file_lock, "fcntl", _ReleaseBetweenOpenAndLock(holder))
    # `late` opened the file, the holder removed it and let go, `late` locked the removed
    # file: it must notice and lock the file at the path instead.
    assert late.try_acquire()
    monkeypatch.setattr(file_lock, "fcntl", fcntl)
    newcomer = FileLock(path, remove_on_release=True)
    assert not newcomer.try_acquire()
    assert holder_pid(path) == os.getpid()
    late.release()
    assert newcomer.try_acquire()
    newcomer.release()
