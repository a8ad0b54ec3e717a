"""The file edits of a session's earlier turns, so a follow-up replays on what it follows.

A follow-up ("now also handle X") depends on what the earlier turns changed, but a replay
copies the project at tonight's commit. So the harvest keeps, per prompt, the edits the
agent made through its edit tools (Claude Code's Edit / Write / MultiEdit inputs, Codex's
apply_patch; the other agents' in sleep/edit_tools.py), the miner attaches the earlier
turns' edits to a follow-up, and the replay applies them, in order, to a copy of the
project before the agent starts.

Everything here is defensive: an edit is the transcript's word, not a patch we trust.
- a path is kept relative to the session's folder; an absolute path outside it, or one
  with `..`, is refused when mined and again when applied (nor may it go through a
  symlink out of the copy);
- an edit whose text the secret redaction changed is dropped by the harvest (applying it
  would write the placeholder); an over-long one is dropped too;
- an edit that does not apply (its old text is not there, or not once) is skipped and
  noted, never fatal: later turns may have been made by hand, or the commit moved on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from core.models.agents.workspace import pristine_tree

MAX_EDIT_CHARS = 20_000  # one edit's old + new text; a larger one is not kept
MAX_TURN_EDITS = 40  # the edits kept of one prompt's turn
MAX_PRIOR_EDIT_CHARS = 80_000  # the earlier turns' edits a follow-up carries, in all
_EDIT_TOOLS = ("Edit", "Write", "MultiEdit")


@dataclass(frozen=True)
class FileEdit:
    """Replace `old` by `new` in the file at `path` (all of them with `replace_all`), or,
    with `write`, make the file `new`. `path` is as recorded in the harvest, relative to
    the session's folder once mined."""

    path: str
    new: str
    old: str = ""
    write: bool = False
    replace_all: bool = False

    @property
    def size(self) -> int:
        return len(self.old) + len(self.new)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v or k in ("path", "new")}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileEdit:
        return cls(**data)

    def describe(self) -> str:
        return f"{'wrote' if self.write else 'edited'} {self.path}"


def edit_problem(data: Any) -> str:
    """What is wrong with a stored edit ('' when FileEdit.from_dict reads it)."""
    types = {"path": str, "new": str, "old": str, "write": bool, "replace_all": bool}
    if (
        not isinstance(data, dict)
        or not {"path", "new"} <= set(data) <= set(types)
        or not all(isinstance(v, types[k]) for k, v in data.items())
    ):
        return "an earlier edit is not {path, new, old?, write?, replace_all?}"
    return ""


def claude_edits(name: str, arguments: Any) -> list[FileEdit]:
    """The edits of one Claude Code tool call (none for other tools or odd inputs)."""
    if name not in _EDIT_TOOLS or not isinstance(arguments, dict):
        return []
    path = arguments.get("file_path")
    if not isinstance(path, str) or not path:
        return []
    if name == "Write":
        content = arguments.get("content")
        return [FileEdit(path, content, write=True)] if isinstance(content, str) else []
    steps = arguments.get("edits") if name == "MultiEdit" else [arguments]
    out = []
    for step in steps if isinstance(steps, list) else []:
        old, new = (
            step.get(k) if isinstance(step, dict) else None for k in ("old_string", "new_string")
        )
        if isinstance(old, str) and isinstance(new, str):
            out.append(FileEdit(path, new, old, replace_all=step.get("replace_all") is True))
    return out


_PATCH_FILE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ")


def codex_patch_edits(patch: Any) -> list[FileEdit]:
    """The edits of a Codex `apply_patch` input (`*** Begin Patch` … `*** End Patch`): an
    added file is written whole; each `@@` hunk of an updated file replaces its context
    and `-` lines by its context and `+` lines. A deleted or moved file, and a hunk with
    no old text to find, are left out (the later edits then skip, noted, if they need it)."""
    if not isinstance(patch, str) or "*** Begin Patch" not in patch:
        return []
    out: list[FileEdit] = []
    path, kind, moved = "", "", False
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if kind == "add" and path:
            out.append(FileEdit(path, "".join(f"{line}\n" for line in new), write=True))
        elif kind == "update" and path and not moved and any(old):
            out.append(FileEdit(path, "\n".join(new), "\n".join(old)))
        old.clear()
        new.clear()

    for line in patch.splitlines():
        if line.startswith(_PATCH_FILE) or line.startswith("*** End Patch"):
            flush()
            kind = {"A": "add", "U": "update", "D": "delete"}.get(line[4:5], "")
            path, moved = line.split(": ", 1)[1].strip() if ": " in line else "", False
        elif line.startswith("*** Move to: "):
            moved = True
        elif line.startswith("@@"):
            if kind == "update":
                flush()
        elif line.startswith("*** ") or kind not in ("add", "update"):
            continue
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith("-") and kind == "update":
            old.append(line[1:])
        elif kind == "update":
            old.append(line[1:])
            new.append(line[1:])
    flush()
    return out


def confined(edit: FileEdit, cwd: str | None) -> FileEdit | None:
    """The edit with its path relative to the session's folder `cwd`, or None when the
    path leaves it (absolute elsewhere, `..`, or no folder to be relative to)."""
    path = PurePosixPath(edit.path.replace("\\", "/"))
    if path.is_absolute():
        if not cwd or not path.is_relative_to(PurePosixPath(cwd)):
            return None
        path = path.relative_to(PurePosixPath(cwd))
    if not path.parts or ".." in path.parts or str(path) == ".":
        return None
    return FileEdit(str(path), edit.new, edit.old, edit.write, edit.replace_all)


def prior_edits(turns: list[list[FileEdit]]) -> list[FileEdit]:
    """The earlier turns' edits in order, cut where they pass the cap: a later edit may
    depend on an earlier one, so the first ones are kept, never a sample."""
    out: list[FileEdit] = []
    total = 0
    for edit in (e for turn in turns for e in turn):
        total += edit.size
        if total > MAX_PRIOR_EDIT_CHARS:
            break
        out.append(edit)
    return out


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
                "workspace (it is the project as it is now): where this request depends on "
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
