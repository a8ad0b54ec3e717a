"""`skillopt ...` run inside the test's own process, as a subprocess would see it: the
same entry point (skillopt_tui.cli.main.main, which turns errors into one line and an
exit code), the environment replaced by the given one, the working directory, argv and
stdin set, and stdout/stderr captured at the file-descriptor level too, so output of a
child the command starts (git) counts as it would from a real process.

Why: a fresh `skillopt` process costs about a second of imports, and suites of many bad
inputs against the same commands spend most of their time there. What the process
boundary itself adds (a uid of its own, an interpreter's exit path) stays tested by each
such suite's real-process cases (tests/sleep/cli_world.py World.run)."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

from skillopt_tui.cli.main import main

# A fresh interpreter's warning filters (Python's documented defaults, release build).
FRESH_FILTERS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


def _to_stderr(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _as_a_fresh_interpreter() -> Iterator[None]:
    """Warnings and log records reach stderr as they would in a new process: pytest's own
    log handlers and warning capture are set aside, so the root logger has no handler
    (logging's last resort prints WARNING and above) and warnings use the default filters."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(FRESH_FILTERS):
            warnings.filterwarnings(action, category=category, module=module)
        warnings.showwarning = _to_stderr  # not pytest's recorder
        root.handlers.clear()
        root.setLevel(logging.WARNING)
        try:
            yield
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)


@contextlib.contextmanager
def _fds_to_files() -> Iterator[tuple[io.BufferedRandom, io.BufferedRandom]]:
    """Fds 0, 1 and 2 pointed at an empty stdin and two files for the duration."""
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    with (
        open(os.devnull, "rb") as empty,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        try:
            for fd, target in ((0, empty), (1, out), (2, err)):
                os.dup2(target.fileno(), fd)
            yield out, err
        finally:
            for fd, old in zip((0, 1, 2), saved, strict=True):
                os.dup2(old, fd)
                os.close(old)


def _exit_code(exc: SystemExit, stderr: io.StringIO) -> int:
    """What the interpreter would exit with for this SystemExit."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=stderr)
    return 1


def run_main(
    args: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    argv0: str,
    input: str = "",
) -> subprocess.CompletedProcess:
    """`argv0 *args` as a CompletedProcess (text mode). An uncaught exception is exit 1
    with its traceback on stderr, as the interpreter reports it."""
    stdout, stderr = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = [argv0, *args]
        with _fds_to_files() as (fd_out, fd_err), _as_a_fresh_interpreter():
            sys.stdin, sys.stdout, sys.stderr = io.StringIO(input), stdout, stderr
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = _exit_code(exc, stderr)
            except BaseException:  # the interpreter prints it and exits 1
                traceback.print_exc(file=stderr)
                code = 1
            finally:
                sys.stdin, sys.stdout, sys.stderr = saved_streams
            fd_out.seek(0)
            fd_err.seek(0)
            out_bytes, err_bytes = fd_out.read(), fd_err.read()
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
    return subprocess.CompletedProcess(
        [argv0, *args],
        code,
        stdout.getvalue() + out_bytes.decode(errors="replace"),
        stderr.getvalue() + err_bytes.decode(errors="replace"),
    )
