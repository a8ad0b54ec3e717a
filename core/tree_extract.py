"""Unpacking a tree someone else made (a project's commit, a shipped folder) into a folder.

Why not `extractall(filter="data")` alone: that filter raises on the first member it
refuses, and a project that commits `ln -s /etc/hosts link` or `../sibling` (common in
monorepos) would then fail every replay, every night. Here a member the filter refuses (a
link leaving the destination, an absolute or `..` path, a device) is left out and noted,
and the rest is extracted under the same filter; nothing is ever written through a link.
"""

from __future__ import annotations

import tarfile
from dataclasses import dataclass, field
from pathlib import Path


class TreeTooLarge(Exception):
    """The members past `max_total_bytes`: the caller says what to do in its own words."""


@dataclass
class _Filter:
    """tarfile's "data" rules, a refused member left out (and noted) instead of fatal."""

    max_file_bytes: int | None
    max_total_bytes: int | None
    left_out: list[str] = field(default_factory=list)
    total: int = 0

    def __call__(self, member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
        try:
            member = tarfile.data_filter(member, dest)
        except tarfile.FilterError as exc:
            self.left_out.append(f"{member.name}: {_reason(member, exc)}")
            return None
        if self.max_file_bytes is not None and member.size > self.max_file_bytes:
            self.left_out.append(f"{member.name}: larger than {self.max_file_bytes:,} bytes")
            return None
        self.total += member.size
        if self.max_total_bytes is not None and self.total > self.max_total_bytes:
            raise TreeTooLarge()
        return member


def _reason(member: tarfile.TarInfo, exc: tarfile.FilterError) -> str:
    if member.issym() or member.islnk():
        kind = "a symlink" if member.issym() else "a hard link"
        return f"{kind} to {member.linkname!r}, outside the tree"
    if isinstance(exc, tarfile.SpecialFileError):
        return "a device or FIFO"
    return "a path outside the tree"


def extract_tree(
    tar: tarfile.TarFile,
    dest: Path,
    *,
    max_file_bytes: int | None = None,
    max_total_bytes: int | None = None,
) -> list[str]:
    """Extract every member of `tar` the "data" filter allows into `dest` (a stream, read
    once, works); return one note per member left out: a refused one, or a file past
    `max_file_bytes`. Past `max_total_bytes` in all it raises TreeTooLarge."""
    keep = _Filter(max_file_bytes, max_total_bytes)
    tar.extractall(dest, filter=keep)
    return keep.left_out


def left_out_note(left_out: list[str] | tuple[str, ...], limit: int = 5) -> str:
    """One line for a trajectory or a report: what the copy left out, the first few named."""
    if not left_out:
        return ""
    named = "; ".join(left_out[:limit])
    more = f"; and {len(left_out) - limit} more" if len(left_out) > limit else ""
    return f"left out of the copy ({len(left_out)}): {named}{more}"
