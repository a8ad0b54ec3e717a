"""Write-then-rename, so a crash leaves either the old file or the new one, never half."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from core.clean_text import utf8


def _target_mode(path: Path) -> int:
    """Keep an existing file's permissions; a new file gets what open() would give it
    (mkstemp alone would leave 0600)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _target_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> None:
    """newline="" semantics: the text is written exactly, CRLF stays CRLF; a lone
    surrogate (a transcript's stray `\ud83d` escape) is written as U+FFFD, never fatal."""
    write_bytes(path, utf8(text))


def write_json(path: str | Path, data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n")
