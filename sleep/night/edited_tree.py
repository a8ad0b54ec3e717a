"""A copy of the project with a follow-up's earlier edits applied: the tree its replay
starts from. The edits are the transcript's word (sleep/harvest/file_edits.py says how
they were kept); here they are applied defensively: a path that leaves the copy, or an
edit whose old text is not there exactly once, is skipped and noted, never fatal.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from core.models.agents.workspace import pristine_tree
from core.safe_git import run_git
from sleep.harvest.file_edits import FileEdit
from sleep.harvest.timestamps import parse_timestamp


def _target(root: Path, rel: str) -> Path | None:
    """Where `rel` is in the copy at `root`, or None when it would leave the copy."""
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    target = root.joinpath(*path.parts)
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return target if resolved.is_relative_to(root.resolve()) else None


def apply_edit(root: Path, edit: FileEdit, base: str = "") -> str:
    """Apply one edit in the copy at `root` (its path below `base`, the session folder's
    place in the project); '' when it applied, else why it was skipped."""
    try:
        return _apply(root, edit, base)
    except OSError as exc:  # a folder where the file was, a file where a folder is, …
        return f"it cannot be written ({type(exc).__name__})"


def _apply(root: Path, edit: FileEdit, base: str) -> str:
    target = _target(root, f"{base}/{edit.path}" if base else edit.path)
    if target is None:
        return "its path leaves the project"
    if edit.write or (not edit.old and not target.exists()):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(edit.new, encoding="utf-8")
        return ""
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "the file is not there"
    except (OSError, UnicodeDecodeError) as exc:
        return f"the file is unreadable ({type(exc).__name__})"
    found = text.count(edit.old) if edit.old else 0
    if found == 0:
        return "its old text is not in the file"
    if found > 1 and not edit.replace_all:
        return f"its old text is in the file {found} times"
    target.write_text(text.replace(edit.old, edit.new), encoding="utf-8")
    return ""


@dataclass(frozen=True)
class EditedTree:
    """A copy of the project with a follow-up's earlier edits applied: the tree the
    replay starts from (and diffs against), what applied and what was skipped."""

    root: Path
    applied: list[str]
    skipped: list[str]
    # what the copy of the project left out (a committed symlink out of it), one note each
    left_out: list[str] = field(default_factory=list)

    def note(self) -> str:
        """What the agent prompt says of the earlier changes."""
        if not self.applied:
            return (
                "None of the earlier requests' recorded edits could be applied to this "
                "workspace (it is the project as it was when the session began): where this request depends on "
                "them, make them first, then do this request."
            )
        done = "; ".join(dict.fromkeys(self.applied))
        gaps = (
            f" {len(self.skipped)} of them did not apply, so some earlier changes may be "
            "missing: where this request depends on them, make them first."
            if self.skipped
            else ""
        )
        return f"The earlier requests' recorded edits are already applied here ({done}).{gaps}"


def _key(project: Path, commit: str | None, edits: list[FileEdit], base: str) -> str:
    identity = [str(project), commit, base, [e.to_dict() for e in edits]]
    return hashlib.sha256(json.dumps(identity).encode("utf-8")).hexdigest()[:16]


def _build(place: Path, project: Path, commit: str | None, edits: list[FileEdit], base: str):
    with pristine_tree(project, commit) as tree:
        shutil.copytree(tree.root, place, dirs_exist_ok=True, symlinks=True)
    applied: list[str] = []
    skipped: list[str] = []
    for n, edit in enumerate(edits, 1):
        why = apply_edit(place, edit, base)
        if why:
            skipped.append(f"earlier edit {n} ({edit.describe()}) skipped: {why}")
        else:
            applied.append(edit.describe())
    return applied, skipped, list(tree.left_out)


@contextlib.contextmanager
def edited_tree(
    project: Path,
    commit: str | None,
    edits: list[FileEdit],
    *,
    base: str = "",
    keep_in: Path | None = None,
) -> Iterator[EditedTree]:
    """The project at `commit` (its folder when None) with `edits` applied, in a temporary
    folder removed on exit; or, with `keep_in`, kept there under a name that hashes its
    inputs (a handoff workspace outlives the run and is found again by its tree's path)."""
    if keep_in is None:
        place = Path(tempfile.mkdtemp(prefix="skillopt-followup-"))
        try:
            yield EditedTree(place, *_build(place, project, commit, edits, base))
        finally:
            shutil.rmtree(place, ignore_errors=True)
        return
    place = Path(keep_in) / f"followup-{_key(project, commit, edits, base)}"
    record = place.with_name(place.name + ".json")
    if not (place.is_dir() and record.is_file()):
        shutil.rmtree(place, ignore_errors=True)
        place.parent.mkdir(parents=True, exist_ok=True)
        applied, skipped, left_out = _build(place, project, commit, edits, base)
        record.write_text(
            json.dumps({"applied": applied, "skipped": skipped, "left_out": left_out}), "utf-8"
        )
    data = json.loads(record.read_text(encoding="utf-8"))
    yield EditedTree(
        place, list(data["applied"]), list(data["skipped"]), list(data.get("left_out", []))
    )


@functools.lru_cache(maxsize=256)
def commit_before(project: Path, commit: str, started: str | None) -> str:
    """Where a task's replay starts: the last commit of `commit`'s history made before
    its session began (`started`), so the person's request is still to do there and a
    correct replay shows its change in the diff — at the night's commit, work the person
    committed later makes a correct replay an empty diff. `commit` itself when the
    session's start is unknown or the project has no commit that old."""
    when = parse_timestamp(started)
    if when is None:
        return commit
    if not Path(project).is_dir():
        return commit
    done = run_git("rev-list", "-1", f"--before=@{int(when.timestamp())}", commit, cwd=project)
    found = done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""
    return found or commit


def start_commit(
    project: Path, commit: str, started: str | None, recorded: str | None = None
) -> str:
    """Where a task's replay starts: the commit its session recorded at its start
    (`recorded`, Codex's), when the night's `commit` descends from it; else the last
    commit made before the session began (`commit_before`)."""
    if recorded and _descends(project, commit, recorded):
        return recorded
    return commit_before(project, commit, started)


@functools.lru_cache(maxsize=256)
def _descends(project: Path, commit: str, ancestor: str) -> bool:
    if not Path(project).is_dir():
        return False
    return run_git("merge-base", "--is-ancestor", ancestor, commit, cwd=project).returncode == 0


def session_base(project: Path, session_cwd: str | None) -> str:
    """Where the session's folder is in the replayed project ('' at its root, or when the
    session ran elsewhere: its recorded paths are then taken from the project's root)."""
    if not session_cwd:
        return ""
    cwd = PurePosixPath(session_cwd)
    root = PurePosixPath(Path(project).resolve().as_posix())
    for candidate in (root, PurePosixPath(Path(project).as_posix())):
        if cwd.is_relative_to(candidate):
            rel = str(cwd.relative_to(candidate))
            return "" if rel == "." else rel
    return ""
