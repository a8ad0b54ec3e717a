"""Started by the sandbox as `python -I sandbox_boot.py PROGRAM`: installs an audit hook, then
runs PROGRAM as __main__ in the current (temporary) directory.

The hook refuses, with PermissionError: opening a file for writing (or creating, removing,
renaming one) outside the current directory; starting processes; network connections;
loading native libraries through ctypes, and looking up native functions through it.
`import ctypes` itself opens the interpreter's own symbols (`dlopen(NULL)`, nothing new
loaded) and is allowed: numpy imports ctypes, and openpyxl imports numpy when it is
installed, so refusing it refused every workbook program on a machine with numpy.

It guards against a generated program's mistakes (overwriting the user's files, shelling
out, reaching the network); it is not a boundary against deliberately hostile code — the
rlimits, the scrubbed environment and the temporary directory are the other layers.
"""

import os
import runpy
import sys

ROOT = os.path.realpath(os.getcwd())
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


def _inside(path) -> bool:
    if isinstance(path, int):
        return True  # an already-open descriptor
    try:
        full = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return full == ROOT or full.startswith(ROOT + os.sep)


def _hook(event, args):
    if event == "open":
        path, mode, flags = args
        writing = (mode is not None and any(c in mode for c in "wax+")) or (
            mode is None and flags & _WRITE_FLAGS
        )
        if writing and not _inside(path):
            raise PermissionError(f"sandbox: writing outside the working directory: {path}")
    elif event in _PATH_EVENTS:
        for path in args[:2]:
            if isinstance(path, (str, bytes, os.PathLike)) and not _inside(path):
                raise PermissionError(f"sandbox: {event} outside the working directory: {path}")
    elif event == "ctypes.dlopen" and args[0] is None:
        return  # the interpreter's own symbols, opened by `import ctypes`
    elif event.startswith(_BLOCKED):
        raise PermissionError(f"sandbox: {event} is not allowed")


def main():
    program = sys.argv[1]
    sys.argv = [program]
    sys.addaudithook(_hook)
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
