"""Reading and writing the files under a user's home without losing anything.

Reads check, before anything is written, that a path is what install expects: a regular
file (through a symlink, whose target is what we read and later write), UTF-8 without a
byte-order mark, of a sane size, inside folders that exist as folders and can be written.
Writes go through a symlink to its target, so a dotfiles link stays a link. Every problem
is an IntegrationError with one line saying what is wrong and what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from core.errors import UserError, unreadable

MAX_BYTES = 64 * 1024 * 1024  # ~/.claude.json keeps history; far beyond that is not a config


class IntegrationError(UserError):
    """An integration cannot be installed or removed as asked."""


@dataclass(frozen=True)
class Existing:
    """A file that exists: the name we were given, where its bytes really live, the bytes."""

    path: Path
    real: Path
    data: bytes


def real_target(path: Path) -> Path | None:
    """Where writing `path` lands: itself, or the end of its symlink chain; None if nothing
    is there. A dangling or looping link is an error (writing would create a stray file)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise IntegrationError(_file_in_the_way(path)) from None
    except OSError as exc:
        raise IntegrationError(unreadable(path, exc)) from None
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        raise IntegrationError(
            f"{path} is a symlink to {os.readlink(path)}, which does not exist; "
            "fix or remove the link, then try again"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IntegrationError(f"{path} is a symlink loop; fix or remove it") from None
        raise IntegrationError(unreadable(path, exc)) from None


def _file_in_the_way(path: Path) -> str:
    for folder in reversed(path.parents):
        if folder.exists() and not folder.is_dir():
            return f"{folder} is a file, where install needs a folder; move it"
    return f"{path}: a part of this path is not a folder"


def read_existing(path: Path) -> Existing | None:
    """The file at `path` (through links), or None; refuses anything but a regular file."""
    real = real_target(path)
    if real is None:
        return None
    try:
        info = os.stat(real)
        if stat.S_ISDIR(info.st_mode):
            raise IntegrationError(f"{path} is a directory, not a file; move it away")
        if not stat.S_ISREG(info.st_mode):
            raise IntegrationError(f"{path} is not a regular file; move it away")
        if info.st_size > MAX_BYTES:
            raise IntegrationError(f"{path} is larger than {MAX_BYTES // 2**20} MB; not a config")
        with open(real, "rb") as handle:
            return Existing(path, real, handle.read(MAX_BYTES + 1))
    except OSError as exc:
        raise IntegrationError(unreadable(path, exc)) from None


def decode(path: Path, data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        raise IntegrationError(
            f"{path} starts with a byte-order mark; save it as UTF-8 without one, then try again"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntegrationError(unreadable(path, exc)) from None


def check_writable_folder(path: Path, home: Path) -> None:
    """The folders from `home` down to `path`'s parent are folders (or can be made), and the
    deepest existing one can be written: checked before install writes anything."""
    parent = path.parent
    for folder in [parent, *parent.parents]:
        try:
            info = os.stat(folder)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise IntegrationError(unreadable(folder, exc)) from None
        if not stat.S_ISDIR(info.st_mode):
            raise IntegrationError(_file_in_the_way(path))
        if not os.access(folder, os.W_OK | os.X_OK):
            raise IntegrationError(f"{folder} is not writable; nothing was changed")
        return
    raise IntegrationError(f"no existing folder above {path} under {home}")


def check_home(home: Path) -> None:
    if not home.is_dir():
        what = "does not exist" if not home.exists() else "is not a directory"
        raise IntegrationError(f"--home {home} {what}; give your home folder")
