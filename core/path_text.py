"""Paths as text. A file name on Linux is bytes; Python hands a name that is not UTF-8 to
us with surrogate escapes, which print, `json.dumps(ensure_ascii=False)` and every UTF-8
write then refuse with UnicodeEncodeError. Paths we found (transcripts under a folder a
tool named) are shown with the bad bytes as `\\xff` escapes; paths a user gives for us to
record (a project, a state directory) are refused with a one-line error."""

from __future__ import annotations

import os
from pathlib import Path

from core.errors import UserError


def is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(path: str | Path) -> str:
    """`path` as printable UTF-8 text: itself when it is, else its undecodable bytes as
    `\\xNN` escapes (the same text for the same path on every run)."""
    text = os.fspath(path)
    if is_text(text):
        return text
    return os.fsencode(text).decode("utf-8", "backslashreplace")


def require_text(path: Path | None, what: str) -> Path | None:
    """`path` unchanged, or a UserError when its name is not UTF-8 (it would be recorded
    in sleep.yaml, night.json and the cron line, all UTF-8 text)."""
    if path is not None and not is_text(os.fspath(path)):
        raise UserError(
            f"{what} {shown(path)}: the path is not valid UTF-8; rename it, or give a "
            "symlink with a UTF-8 name"
        )
    return path
