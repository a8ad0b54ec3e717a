"""The file edits of a session's earlier turns, so a follow-up replays on what it follows.

A follow-up ("now also handle X") depends on what the earlier turns changed, but a replay
copies the project at tonight's commit. So the harvest keeps, per prompt, the edits the
agent made through its edit tools (Claude Code's Edit / Write / MultiEdit inputs, Codex's
apply_patch; the other agents' in sleep/harvest/edit_tools.py), the miner attaches the earlier
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

from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

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
    path leaves it."""
    path = confined_path(edit.path, cwd)
    if path is None:
        return None
    return FileEdit(path, edit.new, edit.old, edit.write, edit.replace_all)


def confined_path(recorded: str, cwd: str | None) -> str | None:
    """A recorded path relative to the session's folder `cwd`, or None when it leaves it
    (absolute elsewhere, `..`, or no folder to be relative to)."""
    path = PurePosixPath(recorded.replace("\\", "/"))
    if path.is_absolute():
        if not cwd or not path.is_relative_to(PurePosixPath(cwd)):
            return None
        path = path.relative_to(PurePosixPath(cwd))
    if not path.parts or ".." in path.parts or str(path) == ".":
        return None
    return str(path)


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
