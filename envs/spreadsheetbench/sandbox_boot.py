"""Started by the sandbox as `python -I sandbox_boot.py PROGRAM [MAX_PROCESSES [UID]]`:
inside the bubblewrap jail (envs/jail.py) it first drops to UID when given (the jail is run
by root) and sets the process limit; then it installs an audit hook and runs PROGRAM as
__main__ in the current (work) directory.

The hook refuses, with PermissionError: opening a file for writing (or creating, removing,
renaming one, or a sqlite database) outside the current directory; reading or listing
anything outside it and the interpreter's own folders; starting processes; network
connections and datagrams; signals; loading native libraries through ctypes, and looking up
native functions through it. `import ctypes` itself opens the interpreter's own symbols
(`dlopen(NULL)`, nothing new loaded) and is allowed: numpy imports ctypes, and openpyxl
imports numpy when it is installed, so refusing it refused every workbook program on a
machine with numpy.

`_posixsubprocess.fork_exec`, which starts a process while raising no audit event (a program
that silences subprocess's own `sys.audit` call used it to get past the hook), is closed
too: before the program runs it is replaced by a refusal wherever it is held, and importing
`_posixsubprocess` afresh (after taking it out of sys.modules, or through
`_imp.create_dynamic`) is refused. No workbook program needs to start a process (the
`subprocess.Popen` event is refused anyway), and a library that imports subprocess still
imports it.

The hook is the second layer: it catches a generated program's mistakes with a message the
model can read; the jail is the boundary.
"""

import mimetypes
import os
import resource
import runpy
import sys

ROOT = os.path.realpath(os.getcwd())
# What a program may read besides its work folder: the interpreter's own files.
_READABLE = tuple(
    sorted(
        {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        | {os.path.realpath(p) for p in sys.path if os.path.isdir(p)}
    )
) + ("/dev/null", "/dev/urandom", *mimetypes.knownfiles)  # openpyxl reads mime.types
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_BLOCKED = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "socket.sendmsg",
    "os.kill",
    "os.killpg",
    "signal.pthread_kill",
    "ctypes.dlopen",
    "ctypes.dlsym",
)
_PATH_EVENTS = (
    "os.remove",
    "os.rename",
    "os.mkdir",
    "os.rmdir",
    "os.symlink",
    "os.link",
    "os.truncate",
    "shutil.rmtree",
    "os.chmod",
    "os.chown",
    "os.utime",
)


def _under(path, roots) -> bool:
    if isinstance(path, int):
        return True  # an already-open descriptor
    try:
        full = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return any(full == root or full.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _inside(path) -> bool:
    return _under(path, (ROOT,))


def _readable(path) -> bool:
    return _under(path, (ROOT, *_READABLE))


def _hook(event, args):
    if event == "open":
        path, mode, flags = args
        writing = (mode is not None and any(c in mode for c in "wax+")) or (
            mode is None and flags & _WRITE_FLAGS
        )
        if writing and not _inside(path):
            raise PermissionError(f"sandbox: writing outside the working directory: {path}")
        if not _readable(path):
            raise PermissionError(f"sandbox: reading outside the working directory: {path}")
    elif event in ("os.listdir", "os.scandir"):
        if args and args[0] is not None and not _readable(args[0]):
            raise PermissionError(f"sandbox: listing outside the working directory: {args[0]}")
    elif event == "sqlite3.connect":
        database = args[0]
        if database not in (":memory:", b":memory:", "") and not _inside(database):
            raise PermissionError(f"sandbox: a database outside the working directory: {database}")
    elif event in _PATH_EVENTS:
        for path in args[:2]:
            if isinstance(path, (str, bytes, os.PathLike)) and not _inside(path):
                raise PermissionError(f"sandbox: {event} outside the working directory: {path}")
    elif event == "ctypes.dlopen" and args[0] is None:
        return  # the interpreter's own symbols, opened by `import ctypes`
    elif CLOSE_FORK_EXEC and event == "import" and args[0] == "_posixsubprocess":
        raise PermissionError("sandbox: importing _posixsubprocess again is not allowed")
    elif event.startswith(_BLOCKED):
        raise PermissionError(f"sandbox: {event} is not allowed")


def _confine(max_processes: int | None = None, uid: int | None = None) -> None:
    """Inside the jail: become the jail's own user (when started as root there), then cap
    the number of processes. Both before any of the program's code runs."""
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if max_processes is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))


def _refused_fork_exec(*_args, **_kwargs):
    raise PermissionError("sandbox: _posixsubprocess.fork_exec is not allowed")


# Off only in the jail's own tests, which need a process past the hook to show the jail
# holds (tests/envs/benchmarks/test_spreadsheetbench_jail.py).
CLOSE_FORK_EXEC = True


def _close_fork_exec() -> None:
    """Replace `fork_exec` where it is held (the module and subprocess's own reference,
    taken at import), so no reference to the real one is left for the program."""
    import _posixsubprocess
    import subprocess

    _posixsubprocess.fork_exec = _refused_fork_exec
    if getattr(subprocess, "_fork_exec", None) is not None:
        subprocess._fork_exec = _refused_fork_exec


def main():
    program, *confinement = sys.argv[1:]
    _confine(*(int(number) for number in confinement))
    sys.argv = [program]
    if CLOSE_FORK_EXEC:
        _close_fork_exec()
    sys.addaudithook(_hook)
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
