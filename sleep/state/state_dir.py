"""The Sleep state directory, checked before a command reads or writes any of it.

Why up front: a state directory that is a file, or read-only, or holds a directory where
a lock or a JSON file goes, used to surface as a traceback half-way through a command,
after `sleep init` had already created and committed a skills repository, or silently
("no nights yet" from a state path that is a file). Every Sleep command calls
`check_state_dir` first, so bad state is one line, exit 2, and nothing changed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from core.errors import UserError
from core.path_text import require_text, shown

# What a state directory holds (sleep/night/run.py, harvest.py, settings.py, schedule.py, and
# the TUI's skillopt_tui/app/night_launcher.py).
FILES = (
    "sleep.yaml",
    "harvest-state.json",
    "tasks.json",
    "split-scheme.json",
    "schedule.json",
    "carried-sessions.json",
    "responses.sqlite",
    "harvest.lock",
    "night.lock",
    "cron.log",
    "tui-night.log",
)
FOLDERS = ("nights",)


class BadStateDir(UserError):
    """The state directory (or something in it) is not what Sleep keeps there."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "a special file"


def _writable(folder: Path) -> bool:
    """Writable by us: permission bits (as this user) and not on a read-only mount."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        return not os.statvfs(folder).f_flag & os.ST_RDONLY
    except OSError:
        return True


def _nearest_existing(path: Path) -> Path:
    here = path
    while not os.path.lexists(here) and here != here.parent:
        here = here.parent
    return here


def check_state_dir(state_dir: Path, *, writing: bool) -> Path:
    """`state_dir` when a command may use it (`writing`: also create and write in it),
    else BadStateDir with what is wrong and what to do. Reads only; creates nothing."""
    require_text(state_dir, "--state-dir")
    where = shown(state_dir)
    fix = "pass another --state-dir or move it aside"
    existing = _nearest_existing(state_dir)
    try:
        mode = existing.stat().st_mode
    except OSError as exc:  # a dangling symlink, a loop, no permission to look
        raise BadStateDir(f"state directory {where}: {_unusable(existing, exc)}; {fix}") from None
    if not stat.S_ISDIR(mode):
        what = "is" if existing == state_dir else f"is inside {shown(existing)}, which is"
        raise BadStateDir(f"state directory {where} {what} {_kind(mode)}, not a directory; {fix}")
    if writing and not _writable(existing):
        folder = (
            "is read-only"
            if existing == state_dir
            else f"cannot be created in {shown(existing)} (read-only)"
        )
        raise BadStateDir(f"state directory {where} {folder}; {fix}")
    if existing != state_dir:
        return state_dir
    for name in FILES:
        _expect(state_dir / name, stat.S_ISREG, "a file")
    for name in FOLDERS:
        _expect(state_dir / name, stat.S_ISDIR, "a directory")
    return state_dir


def _unusable(path: Path, exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError) and path.is_symlink():
        return f"{shown(path)} is a dangling symlink (to {shown(os.readlink(path))})"
    return f"cannot use {shown(path)} ({exc.strerror or exc})"


def _expect(path: Path, test, wanted: str) -> None:
    if not os.path.lexists(path):
        return
    try:
        mode = path.stat().st_mode
    except OSError as exc:  # a dangling symlink would be created through, outside the state
        raise BadStateDir(f"{_unusable(path, exc)}; remove it") from None
    if not test(mode):
        raise BadStateDir(
            f"{shown(path)} is {_kind(mode)}, where Sleep keeps {wanted}; remove or rename it"
        )
