"""Review's `e` and `E`: the selected hunk (or the whole candidate) in $EDITOR, staged
again as a commit marked `Edited: by hand` on the same branch.

The same steps as `skillopt skills edit BRANCH [--hunk N]`: read the target in a worker,
hand the terminal to the editor (the app is suspended meanwhile), stage in a worker. The
branch must still be at the head the screen shows, so an edit is never made on text the
reviewer has not seen.
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import SuspendNotSupported

from core.errors import UserError
from skillopt_tui.app.messages import ActionFailed, EditReady, EditStaged
from skillopt_tui.hand_editor import EditFile, stage_edited


class ReviewEdit:
    diff: Any
    state: Any
    busy: bool

    def action_edit(self, whole: bool) -> None:
        if self.diff is None or self.state is None or self.busy:
            return
        if self.app.refuses_write("edit the candidate"):
            return
        item = self.state.item
        hunk = None if whole or item is None else item.hunk.index  # a part: its hunk
        self.busy = True  # one write at a time; cleared when staging ends or is refused
        self._open_edit(self.diff.branch, self.diff.head, hunk)

    @work(thread=True, group="git-write", exit_on_error=False)
    def _open_edit(self, branch: str, head: str, hunk: int | None) -> None:
        try:
            target = self.app.skills.repo().edit_target(branch, hunk)
            if target.head != head:
                raise UserError(
                    f"{branch} changed since it was shown; reopen Review (esc, v) to see it again"
                )
            edit = EditFile.write(target)
        except UserError as exc:
            self.busy = False
            self.post_message(ActionFailed("edit", str(exc)))
            return
        self.post_message(EditReady(edit))

    def on_edit_ready(self, message: EditReady) -> None:
        """Runs the editor on the app's own thread, with the terminal handed over."""
        edit = message.edit
        try:
            try:
                with self.app.suspend():
                    edit.run_editor()
            except SuspendNotSupported:
                if not self.app.is_headless:  # the browser: no terminal to hand over
                    edit.discard()
                    raise UserError(
                        "no editor in the web face; in a terminal run: "
                        f"skillopt skills edit {edit.target.branch}"
                        + (f" --hunk {edit.target.hunk}" if edit.target.hunk else "")
                    ) from None
                edit.run_editor()  # headless (scripts, tests): no terminal to suspend
        except UserError as exc:
            self.busy = False
            self.notify(str(exc), title="Nothing staged", severity="warning", timeout=10)
            return
        self._stage_edit(edit)

    @work(thread=True, group="git-write", exit_on_error=False)
    def _stage_edit(self, edit: EditFile) -> None:
        try:
            said = stage_edited(self.app.skills.repo(), edit)
        except UserError as exc:
            self.post_message(ActionFailed("stage the edit", str(exc)))
            return
        finally:
            self.busy = False
        self.post_message(EditStaged(said))

    def on_edit_staged(self, message: EditStaged) -> None:
        self.notify(message.said, title="Edit")
        self._forget_diff()
        self._load_branches()
