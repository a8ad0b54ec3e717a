"""Runs the person's $EDITOR on a staged candidate, for `skills edit` and Review's `e`.

The text goes to a temporary file named after the branch (so the editor's title says what
is being edited); the editor's exit status decides: non-zero means "abandon", like git's
commit editor. A file kept after a failed staging is the person's work and is never
deleted (the error names it).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import UserError
from core.skills_repo.hand_edit import EditTarget

if TYPE_CHECKING:
    from core.skills_repo import SkillsRepo


class EditorFailed(UserError):
    """The editor could not be started, or exited non-zero: nothing is staged."""


def editor_command() -> list[str]:
    """$VISUAL, else $EDITOR, else vi (as git does), split as a shell would."""
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


@dataclass
class EditFile:
    """The region of a candidate written out for the editor."""

    target: EditTarget
    path: Path

    @classmethod
    def write(cls, target: EditTarget) -> EditFile:
        name = target.run_id + (f"-hunk{target.hunk}" if target.hunk else "")
        folder = Path(tempfile.mkdtemp(prefix="skillopt-edit-"))
        path = folder / f"{name}.md"
        path.write_bytes(target.region)
        return cls(target, path)

    def run_editor(self) -> None:
        """Blocks until the editor exits; raises EditorFailed if it fails to start or
        exits non-zero (then the file is removed: the person abandoned the edit)."""
        command = editor_command()
        try:
            status = subprocess.run([*command, str(self.path)], check=False).returncode
        except OSError as exc:
            self.discard()
            raise EditorFailed(
                f"cannot start the editor {shlex.join(command)!r} ({exc.strerror}); "
                "set $EDITOR to an editor on your PATH"
            ) from exc
        if status != 0:
            self.discard()
            raise EditorFailed(
                f"the editor exited with status {status}: nothing staged "
                f"(save and quit normally to stage the edit)"
            )

    def edited(self) -> bytes:
        return self.path.read_bytes()

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # the folder holds only this file
            self.path.parent.rmdir()


def stage_edited(repo: SkillsRepo, edit: EditFile) -> str:
    """Stages what the editor left and says what happened, in one line. The file is
    removed once staged (or unchanged); kept, and named, when staging is refused."""
    target = edit.target
    try:
        sha = repo.stage_edit(target, edit.edited())
    except UserError as exc:
        raise EditorFailed(f"{exc} (your edited text is kept in {edit.path})") from exc
    edit.discard()
    if sha is None:
        return f"{target.what} left unchanged: nothing staged"
    return f"staged your edit of {target.what} as {sha[:12]} (Edited: by hand)"
