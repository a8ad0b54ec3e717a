"""Runs one agent CLI as its child and ends every process the CLI left behind.

Usage (by core.models.agents.process, never by hand): `python reaper.py ARGV...`.

Why a separate process: killing the CLI's process group misses a tool that called
`setsid` (a daemon, Codex's `bwrap --new-session` helper, a double fork): it has left
the group and the session, and once its parent exits it is reparented to init, out of
our reach. This process marks itself a *child subreaper* (Linux `prctl
PR_SET_CHILD_SUBREAPER`), so every orphan below it is reparented to it instead; when the
CLI exits, or when this process is told to stop (SIGTERM from the caller's timeout, or
its parent dying: `PR_SET_PDEATHSIG`), it SIGKILLs every descendant, waits for them, and
exits with the CLI's status. stdin/stdout/stderr are inherited, never read.

Standard library only, run as a script in the CLI's minimal environment.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_SWEEPS = 200  # passes over the process table; each kills what the last one orphaned


class Stop(Exception):
    """SIGTERM (or our parent ended): kill everything below us and leave."""


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl failed")


def _parent_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # after "(comm)", which may hold spaces
    if fields[0] == b"Z":
        return None  # a zombie: nothing to kill, only to reap
    return int(fields[1])


def descendants(root: int) -> list[int]:
    """Every live process below `root`, from the /proc parent links."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            parent = _parent_of(name)
            if parent is not None:
                children.setdefault(parent, []).append(int(name))
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_descendants() -> None:
    """SIGKILL everything below us until nothing is left (killed parents' children are
    reparented to us and found by the next sweep)."""
    me = os.getpid()
    for _ in range(_SWEEPS):
        found = descendants(me)
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        if not found:
            return
        time.sleep(0.005)


def _stop(_signum: int, _frame: object) -> None:
    raise Stop


def main(argv: list[str]) -> int:
    if not argv:
        print("reaper: no command given", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop)
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: the process group kill and the home sweep still apply
    code, by_signal = 0, signal.SIGTERM  # what we end with if told to stop
    try:
        if os.getppid() == 1:
            raise Stop  # our parent ended before PR_SET_PDEATHSIG was set
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # none mid-fork
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            try:
                os.execvp(argv[0], argv)
            except OSError as exc:
                os.write(2, f"cannot start {argv[0]} ({exc.strerror})\n".encode())
            os._exit(127)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        while True:
            pid, wait_status = os.wait()  # orphans below us are reaped here too
            if pid == child:
                code = os.waitstatus_to_exitcode(wait_status)
                by_signal = -code if code < 0 else 0
                break
    except Stop:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        end_descendants()
    if by_signal:  # end the way the CLI ended, so the caller sees the same status
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(by_signal, signal.SIG_DFL)
        os.kill(os.getpid(), by_signal)
        return 128 + by_signal  # a signal whose default is not to end a process
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
