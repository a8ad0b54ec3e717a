"""The folder a user names as `--source`, and the only files a materialiser may read.

A dataset's rows name further files (a page image, a workbook folder, a cited document).
Those names come from the data, not from the user, so each one is resolved against the
source root and refused when it is absolute, climbs out with `..`, or is a symlink whose
target lies outside the root: a row of `/etc/hostname` or `../outside/secret.txt` must
never be copied into our data directory. Reads turn the errors a hostile or broken source
gives (not UTF-8, a directory where a file is expected, unreadable) into one-line errors.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from core.environment.contract import EnvError
from core.errors import unreadable


class SourceRoot:
    """Confines every path a source's rows name to `root` (resolved once, symlinks and all)."""

    def __init__(self, root: Path) -> None:
        try:
            self.root = Path(root).resolve(strict=True)
        except (OSError, RuntimeError):
            raise EnvError(f"--source {root}: no such file or folder") from None
        if not self.root.is_dir():
            raise EnvError(f"--source {root}: not a folder")

    def contains(self, path: Path) -> bool:
        """Whether `path`, with every symlink followed, lies inside the root."""
        try:
            resolved = Path(os.path.realpath(path))
        except (OSError, ValueError):
            return False
        return resolved == self.root or resolved.is_relative_to(self.root)

    def files(self, pattern: str) -> list[Path]:
        """Regular files under the root matching `pattern` (recursively), in name order;
        a match that is a symlink out of the root, a FIFO or a device is left out."""
        found = []
        for path in sorted(self.root.rglob(pattern)):
            if self.contains(path) and _is_regular(path):
                found.append(path)
        return found

    def resolve(self, name: object, what: str, *, folder: bool = False) -> Path:
        """The file (or folder) a row names, relative to the root; an EnvError naming the
        row's value when it is not a relative path to a regular file inside the root."""
        if not isinstance(name, str) or not name.strip() or "\x00" in name:
            raise EnvError(f"{what}: {name!r} is not a file name")
        relative = Path(name)
        if relative.is_absolute():
            raise EnvError(
                f"{what}: {name!r} is an absolute path; paths in the source must be "
                f"relative to --source {self.root}"
            )
        candidate = self.root / relative
        if not self.contains(candidate):
            raise EnvError(f"{what}: {name!r} points outside --source {self.root}; refused")
        kind_ok = candidate.is_dir() if folder else _is_regular(candidate)
        if not kind_ok:
            kind = "folder" if folder else "regular file"
            raise EnvError(f"{what}: {name!r} is not a {kind} under --source {self.root}")
        return Path(os.path.realpath(candidate))


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def read_source_text(path: Path) -> str:
    """A source file as UTF-8 text, or a one-line EnvError saying why it cannot be."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvError(unreadable(path, exc)) from None


def read_source_bytes(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise EnvError(unreadable(path, exc)) from None


def parse_json(text: str, where: object, line: int | None = None) -> Any:
    """JSON from a source, or a one-line EnvError (malformed, or nested past Python's
    recursion limit). `line` names a JSON Lines line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise EnvError(f"{where}: malformed JSON ({exc.msg}, line {line or exc.lineno})") from None
    except RecursionError:
        raise EnvError(f"{where}: JSON nested too deeply") from None


def read_source_json(path: Path) -> Any:
    return parse_json(read_source_text(path), path)
