"""A project folder's files as bytes, for asserting a replay left the user's checkout
exactly as it was."""

from __future__ import annotations

from pathlib import Path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` but git's own, by relative path."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }
