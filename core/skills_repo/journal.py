"""A small intent journal so an interrupted operation can be undone at the next start.

Before a multi-step change (move refs, update the work tree, write a deploy target), the
operation writes what it is about to do to `.git/skillopt/journal.json`; it removes the
journal when everything is done. Main moves last, in one ref transaction: that is the
operation's commit point. If a journal is found later, the operation died part-way: before
the commit point `recover` puts back the "before" state (refs that we moved are set back,
work-tree files and the deploy target that hold our new content get their old content
again); after it, the change is complete and `recover` only finishes the ref transaction
and removes the journal. Each step only undoes what is recognisably ours, so recovery never
clobbers someone else's later change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.skills_repo.crash_points import CRASH_ENV, crash_point
from core.skills_repo.deploy import DeployRecords, read_bytes, sweep_temp_files, write_file

__all__ = ["CRASH_ENV", "Journal", "crash_point", "recover"]


@dataclass
class Journal:
    path: Path

    @classmethod
    def in_git_dir(cls, git_dir: Path) -> Journal:
        return cls(git_dir / "skillopt" / "journal.json")

    def exists(self) -> bool:
        return self.path.exists()

    def write(self, data: dict[str, Any]) -> None:
        write_file(self.path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))

    def read(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}  # torn journal: the rename never happened, so nothing was changed

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def recover(repo: Any, journal: Journal) -> str | None:
    """Undo a half-done operation; return a one-line note of what was undone."""
    data = journal.read()
    if data is None:
        return None
    _remove_stale_git_locks(repo, data)
    if _committed(repo, data):
        _roll_forward(repo, data)
        journal.clear()
        return (
            f"recovered from an interrupted {data.get('op', 'operation')}: it had completed "
            "(main already pointed at it)"
        )
    git = repo.git
    undone: list[str] = []
    lines = []
    for ref, old, new in data.get("refs", []):
        current = git.rev(ref) if ref.startswith("refs/") else None
        if current is not None and current == new:
            lines.append(f"update {ref} {old}\n" if old else f"delete {ref} {new}\n")
        elif current is None and new is None and old:
            lines.append(f"create {ref} {old}\n")
        else:
            continue
        undone.append(ref.removeprefix("refs/heads/"))
    if lines:
        git.run("update-ref", "--stdin", stdin="".join(lines).encode("utf-8"))

    new_main = data.get("new_main")
    paths = data.get("paths", [])
    if paths and repo.head_is_main():
        head = git.rev("HEAD")
        for path in paths:
            ours = git.blob(new_main, path) if new_main else None
            before = git.blob(head, path) if head else None
            file = repo.path / path
            current = read_bytes(file)
            if current == before or current != ours:
                continue
            if before is None:
                file.unlink()
                _prune_empty_dirs(file.parent, repo.path)  # git keeps no empty directories
            else:
                write_file(file, before)
            undone.append(path)
        git.call("reset", "-q", "--", *paths)

    for path in paths:  # a kill inside write_file leaves its temp copy next to the file
        sweep_temp_files(repo.path / path)

    deploy = data.get("deploy")
    if deploy:
        target = Path(deploy["target"])
        sweep_temp_files(target)
        current = read_bytes(target)
        new = git.run("cat-file", "blob", deploy["new_blob"])
        if current == new:
            if deploy.get("old_blob"):
                write_file(target, git.run("cat-file", "blob", deploy["old_blob"]))
            else:
                target.unlink()
            undone.append(str(target))
        DeployRecords(repo.git_dir).save(data.get("records_old") or {})
    journal.clear()
    what = ", ".join(undone) or "nothing had changed yet"
    return f"recovered from an interrupted {data.get('op', 'operation')}: restored {what}"


def _remove_stale_git_locks(repo: Any, data: dict[str, Any]) -> None:
    """A git killed with us (kill -9 of the process group) leaves `<ref>.lock` files and
    `index.lock` behind, and every later git command on them fails. We hold the operation
    lock and the journal says the operation died, so the locks of its refs are stale."""
    names = [f"{ref}.lock" for ref, _old, _new in data.get("refs") or []]
    for name in [*names, "index.lock", "packed-refs.lock"]:
        lock = Path(repo.git_dir) / name
        if lock.is_file() and Path(repo.git_dir) in lock.parents:
            lock.unlink(missing_ok=True)


def _committed(repo: Any, data: dict[str, Any]) -> bool:
    """Whether the operation passed its commit point: main moves last (commit_main), so
    main at the journal's new commit means every other step was done."""
    new_main = data.get("new_main")
    refs = data.get("refs") or []
    if not new_main or not refs or refs[0][2] != new_main:
        return False
    return repo.git.rev(refs[0][0]) == new_main


def _roll_forward(repo: Any, data: dict[str, Any]) -> None:
    """Finish what a kill inside the ref transaction may have left: the other refs of it
    that did not move yet, and the index's stat cache."""
    lines = []
    for ref, old, new in data["refs"][1:]:
        current = repo.git.rev(ref)
        if current == old and current != new:
            if new is None:
                lines.append(f"delete {ref} {old}\n")
            elif old is None:
                lines.append(f"create {ref} {new}\n")
            else:
                lines.append(f"update {ref} {new} {old}\n")
    if lines:
        repo.git.run("update-ref", "--stdin", stdin="".join(lines).encode("utf-8"))
    for path in data.get("paths", []):
        sweep_temp_files(repo.path / path)
    if data.get("deploy"):
        sweep_temp_files(Path(data["deploy"]["target"]))
    repo.git.call("update-index", "-q", "--refresh")


def _prune_empty_dirs(directory: Path, stop: Path) -> None:
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent
