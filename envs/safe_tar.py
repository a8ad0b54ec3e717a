"""Unpacking a dataset release archive a user downloaded, member by member checked first.

A release tarball is data from the internet: a member named `/etc/x` or `../x`, a link
whose target leaves the archive, or a device node must not be written anywhere. Every
member is checked before anything is extracted (so a bad archive extracts nothing), and
the extraction itself still runs under tarfile's `data` filter as a second layer.
"""

from __future__ import annotations

import posixpath
import tarfile
import zlib
from pathlib import Path

from core.environment.contract import EnvError


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


def extract_checked(archive: Path, dest: Path) -> None:
    """Extract `archive` into `dest`, or an EnvError naming the first bad member."""
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for member in members:
                problem = member_problem(member)
                if problem:
                    raise EnvError(
                        f"--source {archive}: member {member.name!r} {problem}; "
                        "refused, nothing was extracted (is it the published release?)"
                    )
            tar.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        reason = str(exc).splitlines()[0].rstrip(":") if str(exc) else type(exc).__name__
        raise EnvError(
            f"--source {archive}: not a readable tar archive ({reason}); download it again"
        ) from None
    except OSError as exc:
        raise EnvError(f"--source {archive}: cannot be unpacked ({exc.strerror or exc})") from None
