"""Writing a skill to its deploy target, and noticing when someone edited the target by hand.

What we last deployed is recorded per skill in `.git/skillopt/deployed.json` (target path,
sha256, and the blob in the object store so the difference can be shown). Why in `.git/` and
not committed: deploy targets are paths on this machine, not part of the skill's history, and
a revert of an adoption must not revert the record of what is on disk.

Before writing, the target must hold what we last deployed (or, before our first deploy,
what `main` held); otherwise we refuse and show the difference, unless forced. A missing
target is simply (re)created: nothing would be lost.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from core.skills_repo.crash_points import crash_point
from core.skills_repo.errors import DeployTargetChanged
from core.skills_repo.gitcmd import GitRunner


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_file(path: Path, data: bytes) -> None:
    """Write-then-rename that keeps the existing file's permission bits (a deployed SKILL.md
    must stay readable by the agent that loads it; mkstemp alone would make it 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        crash_point(f"write:before-rename:{path.name}")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# mkstemp's names in write_file: "." + the file's name + "." + 8 random characters + ".tmp".
_TEMP_SUFFIX = re.compile(r"\.[a-z0-9_]{8}\.tmp")


def sweep_temp_files(path: Path) -> list[Path]:
    """Remove the temp copies a process killed inside `write_file(path, ...)` left next to
    `path` (only names of exactly our shape, so nobody else's file goes); the removed paths."""
    removed = []
    prefix = f".{path.name}"
    try:
        candidates = [p for p in path.parent.iterdir() if p.name.startswith(prefix)]
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for candidate in candidates:
        if _TEMP_SUFFIX.fullmatch(candidate.name[len(prefix) :]) and candidate.is_file():
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


class DeployRecords:
    def __init__(self, git_dir: Path):
        self.path = git_dir / "skillopt" / "deployed.json"

    def load(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}  # unreadable record: fall back to comparing with main

    def save(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        write_file(self.path, text.encode("utf-8"))

    def with_deploy(self, name: str, target: Path, blob: str, data: bytes, commit: str) -> dict:
        records = self.load()
        records[name] = {
            "target": str(target),
            "sha256": sha256(data),
            "blob": blob,
            "commit": commit,
        }
        return records


def check_target(
    git: GitRunner,
    records: DeployRecords,
    name: str,
    target: Path,
    *,
    main_before: bytes | None,
    new: bytes,
) -> None:
    """Raise DeployTargetChanged if writing `new` to `target` would lose a hand edit."""
    current = read_bytes(target)
    if current is None or current == new:
        return
    record = records.load().get(name)
    expected: bytes | None
    if record and record.get("target") == str(target):
        if sha256(current) == record.get("sha256"):
            return
        status, out, _ = git.call("cat-file", "blob", str(record.get("blob", "")))
        expected = out if status == 0 else None
    else:
        if current == main_before:
            return
        expected = main_before
    difference = text_difference(expected, current, str(target))
    changed = sum(
        1 for ln in difference.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")
    )
    raise DeployTargetChanged(
        f"deploy target {target} was changed outside skillopt ({changed} lines differ from "
        "what we last deployed); fold your edit into the skill in the repo, or pass --force "
        "to overwrite it",
        str(target),
        difference,
    )


def text_difference(expected: bytes | None, current: bytes, label: str) -> str:
    if expected is None:
        return "(the content we last deployed is no longer available)\n"
    a = expected.decode("utf-8", "replace").splitlines(keepends=True)
    b = current.decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, "last deployed", label)
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines)
