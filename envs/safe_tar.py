"""Unpacking a dataset release archive a user downloaded, member by member checked first.

A release tarball is data from the internet: a member named `/etc/x` or `../x`, a link
whose target leaves the archive, or a device node must not be written anywhere. Every
member is checked before anything is extracted (so a bad archive extracts nothing), and
the extraction itself still runs under tarfile's `data` filter as a second layer.

An archive can also be a bomb: a few kilobytes of gzip that unpack to terabytes, or
millions of empty members. The members' sizes (what extraction will write, byte for byte)
and their number are capped before anything is written: past `MAX_TOTAL_BYTES` or
`MAX_MEMBERS` the archive is refused whole. The release SpreadsheetBench publishes is far
below both (400 tasks, a few thousand files).
"""

from __future__ import annotations

import posixpath
import tarfile
import zlib
from pathlib import Path

from core.environment.contract import EnvError

MAX_TOTAL_BYTES = 8 * 1024**3  # what every member unpacks to, together
MAX_MEMBERS = 200_000


def _escapes(name: str) -> bool:
    normal = posixpath.normpath(name)
    return name.startswith("/") or normal == ".." or normal.startswith("../")


def member_problem(member: tarfile.TarInfo) -> str | None:
    """Why `member` may not be extracted, or None when it is a plain file, folder or
    a link that stays inside the archive."""
    if _escapes(member.name):
        return "lies outside the archive folder"
    if member.isdev() or member.isfifo() or member.ischr() or member.isblk():
        return "is a device or FIFO"
    if member.issym():
        target = posixpath.join(posixpath.dirname(member.name), member.linkname)
        if member.linkname.startswith("/") or _escapes(target):
            return f"is a symlink out of the archive (to {member.linkname!r})"
    elif member.islnk():
        if _escapes(member.linkname):
            return f"is a hard link out of the archive (to {member.linkname!r})"
    elif not (member.isfile() or member.isdir()):
        return "is not a file or folder"
    return None


def _size(n: int) -> str:
    return f"{n / 1024**3:g} GiB" if n >= 1024**3 else f"{n:,} bytes"


def _checked_members(
    tar: tarfile.TarFile, archive: Path, max_bytes: int, max_members: int
) -> list[tarfile.TarInfo]:
    """Every member, read one header at a time so a bomb of members stops at the cap."""
    members: list[tarfile.TarInfo] = []
    total = 0
    refused = "refused, nothing was extracted (is it the published release?)"
    while (member := tar.next()) is not None:
        problem = member_problem(member)
        if problem:
            raise EnvError(f"--source {archive}: member {member.name!r} {problem}; {refused}")
        members.append(member)
        total += max(member.size, 0) if member.isfile() else 0
        if len(members) > max_members:
            raise EnvError(f"--source {archive}: more than {max_members:,} members; {refused}")
        if total > max_bytes:
            raise EnvError(
                f"--source {archive}: unpacks to more than {_size(max_bytes)}; {refused}"
            )
    return members


def extract_checked(
    archive: Path,
    dest: Path,
    *,
    max_bytes: int = MAX_TOTAL_BYTES,
    max_members: int = MAX_MEMBERS,
) -> None:
    """Extract `archive` into `dest`, or an EnvError naming the first bad member or the
    cap the archive goes past (checked before anything is written)."""
    try:
        with tarfile.open(archive) as tar:
            members = _checked_members(tar, archive, max_bytes, max_members)
            tar.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        reason = str(exc).splitlines()[0].rstrip(":") if str(exc) else type(exc).__name__
        raise EnvError(
            f"--source {archive}: not a readable tar archive ({reason}); download it again"
        ) from None
    except OSError as exc:
        raise EnvError(f"--source {archive}: cannot be unpacked ({exc.strerror or exc})") from None
