"""Planned changes to files under a home, checked in full before anything is written.

A change is either a whole file we own (`FileWrite`) or an edit of a file the agent owns
(`ConfigEdit`: add our entry to the current text, or take it out again). Install first
plans every step: reads each file (through symlinks), validates and edits it in memory,
checks that every folder can be written and no backup is in the way. Only a plan without
a problem runs; a refusal leaves the home untouched. The record
(`<home>/.local/state/skillopt/integrations/<agent>.json`) remembers, per path, whether it
existed and a hash of what we wrote; its paths must be exactly the ones install writes.

Uninstall restores what only we touched: a file still holding what we wrote gets its backup
back (byte-identical round trip); a config the agent changed since loses only our entry,
taken out of the current text, so later edits survive; a whole file the user changed stays.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core.atomic import write_bytes
from core.errors import unreadable
from skillopt_tui.integrations.files import (
    IntegrationError,
    check_home,
    check_writable_folder,
    decode,
    read_existing,
)

BACKUP_SUFFIX = ".skillopt-backup"


@dataclass(frozen=True)
class FileWrite:
    path: Path
    text: str


@dataclass(frozen=True)
class ConfigEdit:
    path: Path
    add: Callable[[str], str]  # current text ("" when missing) -> text with our entry
    remove: Callable[[str, bool], str]  # (text, parent existed before) -> text without it
    what: str  # e.g. "[mcp_servers.skillopt]"
    has_parent: Callable[[str], bool] = lambda text: True  # is our entry's container there


Change = FileWrite | ConfigEdit


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


@dataclass
class Record:
    """What an install did, so uninstall can undo it."""

    file: Path
    home: Path
    entries: dict[str, dict]  # path -> {"existed", "backup", "written", "parent_existed"}
    created_dirs: list[str]

    @classmethod
    def load(cls, file: Path, home: Path, changes: list[Change]) -> Record:
        """The record, refused unless it names only the paths these changes write, their
        own backups, and folders inside the home (a tampered record moves nothing)."""
        check_home(home)
        existing = read_existing(file)
        if existing is None:
            return cls(file, home, {}, [])
        try:
            data = json.loads(decode(file, existing.data))
        except (ValueError, RecursionError, IntegrationError):
            data = None
        entries = data.get("entries") if isinstance(data, dict) else None
        dirs = data.get("created_dirs") if isinstance(data, dict) else None
        if not isinstance(entries, dict) or not isinstance(dirs, list):
            raise IntegrationError(
                f"{file}: unreadable install record (not the JSON install writes); "
                "remove it to start over"
            )
        paths = {str(c.path): c.path for c in changes}
        for key, entry in entries.items():
            ok = (
                key in paths
                and isinstance(entry, dict)
                and isinstance(entry.get("existed"), bool)
                and entry.get("backup") in (None, str(backup_path(paths[key])))
                and isinstance(entry.get("written", ""), str)
            )
            if not ok:
                raise IntegrationError(
                    f"{file}: the install record names a path or backup install never writes; "
                    "remove the record and undo by hand"
                )
        for folder in dirs:
            path = Path(folder) if isinstance(folder, str) else None
            inside = path is not None and path != home and path.is_relative_to(home)
            if not inside or os.path.normpath(folder) != folder:
                raise IntegrationError(
                    f"{file}: the install record names a folder outside {home}; remove it"
                )
        return cls(file, home, entries, dirs)

    def data(self) -> bytes:
        record = {"entries": self.entries, "created_dirs": self.created_dirs}
        return (json.dumps(record, indent=2) + "\n").encode("utf-8")


# -- planning ---------------------------------------------------------------------------


@dataclass
class Plan:
    """Every write a command will make, in order, with one line each for the user."""

    home: Path
    lines: list[str] = field(default_factory=list)
    steps: list[Callable[[], None]] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # to create first, outermost first

    def write(self, line: str | None, target: Path, data: bytes, mode: int | None = None) -> None:
        """Plan writing `data` to `target` (a real path: links are resolved by the caller);
        `mode` for a new file that must not be more readable than what it copies."""
        check_writable_folder(target, self.home)
        self.need_folders(target.parent)
        if line:
            self.lines.append(line)

        def step() -> None:
            write_bytes(target, data)
            if mode is not None:
                os.chmod(target, mode)

        self.steps.append(step)

    def need_folders(self, folder: Path) -> None:
        missing = []
        for parent in [folder, *folder.parents]:
            if parent.exists() or parent in self.folders:
                break
            missing.append(parent)
        self.folders.extend(reversed(missing))


def _text(change: Change, current: str | None) -> str:
    return change.text if isinstance(change, FileWrite) else change.add(current or "")


def plan_install(changes: list[Change], record: Record) -> Plan:
    """Every file install writes, validated; raises IntegrationError before any write."""
    plan = Plan(record.home)
    entries = {k: dict(v) for k, v in record.entries.items()}
    for change in changes:
        path, key = change.path, str(change.path)
        existing = read_existing(path)
        current = decode(path, existing.data) if existing else None
        new = _text(change, current).encode("utf-8")
        target = existing.real if existing else path
        what = f" ({change.what})" if isinstance(change, ConfigEdit) else ""
        note = ""
        if key not in entries:
            entries[key] = {"existed": existing is not None, "backup": None}
            if isinstance(change, ConfigEdit):
                entries[key]["parent_existed"] = bool(current) and change.has_parent(current)
            if existing is not None and existing.data != new:
                backup = backup_path(path)
                if os.path.lexists(backup):
                    raise IntegrationError(
                        f"{backup} already exists: move it away, then install again"
                    )
                entries[key]["backup"] = str(backup)
                plan.write(None, backup, existing.data, stat.S_IMODE(existing.real.stat().st_mode))
                note = f"; back up to {backup}"
        entries[key]["written"] = _digest(new)
        if existing is not None and existing.data == new:
            plan.lines.append(f"unchanged {path}{what}")
            continue
        verb = "create   " if existing is None else ("edit     " if what else "replace  ")
        plan.write(f"{verb} {path}{what}{note}", target, new)
    # The record goes first: if a later write fails, uninstall still knows the whole plan.
    plan.need_folders(record.file.parent)
    new_dirs = [str(f) for f in plan.folders if str(f) not in record.created_dirs]
    final = Record(record.file, record.home, entries, [*record.created_dirs, *new_dirs])
    plan.write(f"record    {record.file}", record.file, final.data())
    plan.lines.insert(0, plan.lines.pop())
    plan.steps.insert(0, plan.steps.pop())
    return plan


def _restorable_backup(path: Path, entry: dict) -> bytes | None:
    """The backup's bytes, if it is still there as a plain file (never through a link)."""
    if not entry.get("backup"):
        return None
    backup = backup_path(path)
    try:
        info = os.lstat(backup)
        if not stat.S_ISREG(info.st_mode):
            raise IntegrationError(f"{backup} is not a regular file; move it away, then try again")
        return backup.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise IntegrationError(unreadable(backup, exc)) from None


def plan_uninstall(changes: list[Change], record: Record) -> Plan:
    plan = Plan(record.home)
    for change in changes:
        path, entry = change.path, record.entries.get(str(change.path))
        if entry is None:
            continue
        try:
            existing = read_existing(path)
        except IntegrationError as exc:
            if isinstance(change, ConfigEdit):
                raise
            plan.lines.append(f"keep      {path} ({exc})")  # the user's now, whatever it is
            continue
        unchanged = existing is not None and _digest(existing.data) == entry.get("written")
        saved = _restorable_backup(path, entry)
        backup = backup_path(path)
        if existing is None:
            if saved is not None:
                plan.lines.append(f"keep      {backup} ({path} is gone: compare by hand)")
            continue
        if unchanged and saved is not None:
            plan.write(f"restore   {path} from {backup}", existing.real, saved)
            _remove(plan, None, backup)
        elif unchanged and not entry["existed"]:
            _remove(plan, f"remove    {path}", path)
        elif unchanged and saved is None and not entry.get("backup"):
            plan.lines.append(f"keep      {path} (it was like this before install)")
        elif isinstance(change, ConfigEdit):
            text = decode(path, existing.data)
            new = change.remove(text, bool(entry.get("parent_existed", True))).encode("utf-8")
            if new != existing.data:
                plan.write(f"edit      {path} (remove {change.what})", existing.real, new)
            if saved is not None:
                plan.lines.append(f"keep      {backup} (from before install: compare by hand)")
        else:
            plan.lines.append(f"keep      {path} (changed since install)")
            if saved is not None:
                plan.lines.append(f"keep      {backup} (the file changed: compare by hand)")
    _remove(plan, f"remove    {record.file}", record.file)
    for folder in reversed(record.created_dirs):
        plan.lines.append(f"rmdir     {folder} (if empty)")
        plan.steps.append(_rmdir_if_empty(Path(folder)))
    return plan


def _remove(plan: Plan, line: str | None, path: Path) -> None:
    check_writable_folder(path, plan.home)
    if line:
        plan.lines.append(line)
    plan.steps.append(lambda: path.unlink(missing_ok=True))


def _rmdir_if_empty(folder: Path) -> Callable[[], None]:
    def run() -> None:
        if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()

    return run


# -- running ----------------------------------------------------------------------------


def run(plan: Plan) -> list[str]:
    """Make the planned folders and writes; an OS failure midway is one line, not a
    traceback (what was written before it is in the record, so uninstall undoes it)."""
    try:
        for folder in plan.folders:
            folder.mkdir(exist_ok=True)
        for step in plan.steps:
            step()
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise IntegrationError(
            f"stopped: {exc.strerror or exc}{where}; what was written is in the record, "
            "so uninstall undoes it"
        ) from None
    return plan.lines
