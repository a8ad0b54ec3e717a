"""Planned changes to files under a home, applied with backups and a record to undo them.

A change is either a whole file we own (`FileWrite`) or an edit of a file the agent owns
(`ConfigEdit`: a function from the current text to the new one, plus its inverse for when
the file changed after we wrote it). The record (`<state>/integrations/<agent>.json`)
remembers, per path, whether it existed, where its backup is, and a hash of what we wrote;
uninstall restores the backup only while the file still holds exactly what we wrote, and
otherwise removes just our part."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.atomic import write_text
from core.errors import UserError

BACKUP_SUFFIX = ".skillopt-backup"


class IntegrationError(UserError):
    """An integration cannot be installed or removed as asked."""


@dataclass(frozen=True)
class FileWrite:
    path: Path
    text: str


@dataclass(frozen=True)
class ConfigEdit:
    path: Path
    add: Callable[[str], str]  # current text ("" when missing) -> text with our entry
    remove: Callable[[str], str]  # text -> text without our entry
    what: str  # e.g. "[mcp_servers.skillopt]"


Change = FileWrite | ConfigEdit


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


@dataclass
class Record:
    """What an install did, so uninstall can undo it."""

    file: Path
    entries: dict[str, dict]  # path -> {"existed": bool, "backup": str|None, "written": sha}
    created_dirs: list[str]

    @classmethod
    def load(cls, file: Path) -> Record:
        if not file.exists():
            return cls(file, {}, [])
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            return cls(file, dict(data["entries"]), list(data["created_dirs"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IntegrationError(
                f"{file}: unreadable install record ({exc}); remove it to start over"
            ) from None

    def save(self) -> None:
        data = {"entries": self.entries, "created_dirs": self.created_dirs}
        write_text(self.file, json.dumps(data, indent=2) + "\n")


def _new_text(change: Change, current: str | None) -> str:
    if isinstance(change, FileWrite):
        return change.text
    return change.add(current or "")


def describe_install(changes: list[Change], record: Record) -> list[str]:
    """One line per file install would write, create or back up (for --dry-run)."""
    lines = []
    for change in changes:
        path = change.path
        current = path.read_text(encoding="utf-8") if path.exists() else None
        new = _new_text(change, current)
        what = f" ({change.what})" if isinstance(change, ConfigEdit) else ""
        if current == new:
            lines.append(f"unchanged {path}{what}")
        elif current is None:
            lines.append(f"create    {path}{what}")
        elif str(path) in record.entries:
            lines.append(f"update    {path}{what}")
        else:
            lines.append(
                f"{'edit' if what else 'replace':9} {path}{what}; back up to {_backup_path(path)}"
            )
    lines.append(f"record    {record.file}")
    return lines


def _make_dirs(directory: Path, record: Record) -> None:
    missing = []
    for parent in [directory, *directory.parents]:
        if parent.exists():
            break
        missing.append(parent)
    for folder in reversed(missing):
        folder.mkdir()
        record.created_dirs.append(str(folder))


def install(changes: list[Change], record: Record) -> list[str]:
    done = []
    _make_dirs(record.file.parent, record)
    for change in changes:
        path = change.path
        current_bytes = path.read_bytes() if path.exists() else None
        current = current_bytes.decode("utf-8") if current_bytes is not None else None
        new = _new_text(change, current)
        key = str(path)
        if key not in record.entries:
            backup = None
            if current_bytes is not None:
                backup = _backup_path(path)
                if backup.exists():
                    raise IntegrationError(
                        f"{backup} already exists: move it away, then install again"
                    )
                shutil.copy2(path, backup)  # keeps the mode too
            record.entries[key] = {
                "existed": current_bytes is not None,
                "backup": str(backup) if backup else None,
            }
        _make_dirs(path.parent, record)
        write_text(path, new)
        record.entries[key]["written"] = _digest(new.encode("utf-8"))
        record.save()  # after every file: an interrupted install can still be undone
        done.append(f"wrote {path}")
    return done


def describe_uninstall(changes: list[Change], record: Record) -> list[str]:
    return [line for line, _ in _uninstall_steps(changes, record)]


def uninstall(changes: list[Change], record: Record) -> list[str]:
    done = []
    for line, step in _uninstall_steps(changes, record):
        step()
        done.append(line)
    return done


def _uninstall_steps(changes: list[Change], record: Record) -> list[tuple[str, Callable[[], None]]]:
    steps: list[tuple[str, Callable[[], None]]] = []
    for change in changes:
        path, key = change.path, str(change.path)
        entry = record.entries.get(key)
        if entry is None:
            continue
        backup = Path(entry["backup"]) if entry.get("backup") else None
        unchanged = path.exists() and _digest(path.read_bytes()) == entry.get("written")
        if unchanged and backup is not None:
            steps.append((f"restore   {path} from {backup}", _restore(path, backup)))
        elif unchanged:
            steps.append((f"remove    {path}", path.unlink))
        elif path.exists() and isinstance(change, ConfigEdit):
            # Changed since we wrote it (the agent saved its config): take out only our entry.
            steps.append((f"edit      {path} (remove {change.what})", _strip(path, change)))
        elif path.exists():
            steps.append((f"keep      {path} (changed since install)", lambda: None))
        if backup is not None and not unchanged and backup.exists():
            steps.append(
                (
                    f"keep      {backup} (the file changed since install: compare by hand)",
                    lambda: None,
                )
            )
    for folder in reversed(record.created_dirs):
        steps.append((f"rmdir     {folder} (if empty)", _rmdir_if_empty(Path(folder))))
    steps.insert(
        len(steps) - len(record.created_dirs),
        (f"remove    {record.file}", _unlink_if_exists(record.file)),
    )
    return steps


def _restore(path: Path, backup: Path) -> Callable[[], None]:
    def run() -> None:
        os.replace(backup, path)

    return run


def _strip(path: Path, change: ConfigEdit) -> Callable[[], None]:
    def run() -> None:
        write_text(path, change.remove(path.read_text(encoding="utf-8")))

    return run


def _unlink_if_exists(path: Path) -> Callable[[], None]:
    def run() -> None:
        path.unlink(missing_ok=True)

    return run


def _rmdir_if_empty(folder: Path) -> Callable[[], None]:
    def run() -> None:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()

    return run
