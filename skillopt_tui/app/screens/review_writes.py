"""Review's writes and their questions: preview (p), adopt (A), reject the branch (r).

A mixin of ReviewScreen (it reads the screen's diff, state, busy flag and deploy target):
kept apart so the screen module holds navigation and decisions, this one what reaches git.
"""

from __future__ import annotations

import difflib
from functools import partial
from typing import Any

from rich.text import Text
from textual import work

from core.errors import UserError
from core.skills_repo.errors import AdoptConflict, DeployTargetChanged
from skillopt_tui.app.messages import (
    ActionFailed,
    AdoptFinished,
    DeployConflict,
    PreviewLoaded,
    RejectFinished,
    RollbackFinished,
)
from skillopt_tui.app.widgets.adopt_summary import adopt_summary
from skillopt_tui.app.widgets.confirm_dialog import Choice, ConfirmDialog
from skillopt_tui.app.widgets.deploy_conflict import ask_overwrite
from skillopt_tui.app.widgets.word_diff import styled_lines


class ReviewWrites:
    diff: Any
    state: Any
    deploy_to: str | None
    busy: bool
    branches: list[Any]
    last_adopt: Any

    # preview

    def action_preview(self) -> None:
        if self.diff is None or self.state is None:
            return
        whole, lines = self.state.selection()
        if not whole and not lines:
            self.notify(
                _only_conflicts(self.state)
                or "Nothing approved yet: the skill on main would not change.",
                severity="warning",
            )
            return
        self._preview(self.diff.branch, whole, lines)

    @work(thread=True, exclusive=True, group="review-preview", exit_on_error=False)
    def _preview(self, branch: str, whole: list[int], lines: dict) -> None:
        try:
            repo = self.app.skills.repo()
            kwargs = {"lines": lines} if lines else {}
            before, after = repo.preview_adopt(branch, whole, **kwargs)
        except UserError as exc:
            self.post_message(ActionFailed("preview the adoption", _tui_words(exc)))
            return
        self.post_message(PreviewLoaded(branch, before, after))

    def on_preview_loaded(self, message: PreviewLoaded) -> None:
        before = message.before.splitlines()
        after = message.after.splitlines()
        rows = list(difflib.unified_diff(before, after, lineterm="", n=len(before) + len(after)))
        body = Text("\n").join(styled_lines(rows[3:])) if rows else Text(message.after)
        self.app.push_screen(
            ConfirmDialog(
                "The skill on main after adopting (+ added, - removed)",
                body,
                (Choice("c", "Close", "close", "primary"),),
            )
        )

    # adopt and reject

    def action_adopt(self) -> None:
        if self.diff is None or self.state is None or self.busy:
            return
        if self.app.refuses_write("adopt"):
            return
        whole, lines = self.state.selection()
        if not whole and not lines:
            self.notify(
                _only_conflicts(self.state)
                or "No hunk approved yet: press y on a hunk, a for all, or space to choose lines.",
                severity="warning",
            )
            return
        # What the dialog shows is what gets adopted: this diff (branch and head) and these
        # hunks and lines, whatever the screen shows by the time the answer comes.
        diff, state = self.diff, self.state
        every = set(whole) == {h.index for h in diff.hunks}
        chosen = None if every else whole

        def answered(choice: str | None) -> None:
            if choice == "yes" and not self.busy:
                self.busy = True  # one write at a time; cleared when the worker ends
                self._adopt(diff, state, chosen, lines)

        self.app.push_screen(
            ConfirmDialog("Adopt these hunks?", adopt_summary(diff, state, self.deploy_to)),
            answered,
        )

    @work(thread=True, group="git-write", exit_on_error=False)
    def _adopt(
        self, diff: Any, state: Any, hunks: list[int] | None, lines: dict, force: bool = False
    ) -> None:
        try:
            repo = self.app.skills.repo()
            if repo.diff(diff.branch).head != diff.head:
                self.post_message(
                    ActionFailed(
                        "adopt",
                        f"{diff.branch} changed since it was shown; "
                        "reopen Review (esc, v) to see it again",
                    )
                )
                return
            kwargs = {"lines": lines} if lines else {}
            result = repo.adopt(diff.branch, hunks, force=force, **kwargs)
        except DeployTargetChanged as exc:
            retry = partial(self._readopt, diff, state, hunks, lines)
            self.post_message(DeployConflict("adopt", exc, retry))
            return
        except UserError as exc:
            self.post_message(ActionFailed("adopt", _tui_words(exc)))
            return
        finally:
            self.busy = False
        self.post_message(AdoptFinished(result, hunks, state))

    def _readopt(self, diff: Any, state: Any, hunks: list[int] | None, lines: dict) -> None:
        if not self.busy:
            self.busy = True
            self._adopt(diff, state, hunks, lines, force=True)

    def on_deploy_conflict(self, message: DeployConflict) -> None:
        ask_overwrite(self, message)

    def on_adopt_finished(self, message: AdoptFinished) -> None:
        result = message.result
        if message.state is not None:
            message.state.mark_adopted()
        self.last_adopt = result
        said = [f"Adopted as {result.commit[:7]} on main (U: undo)"]
        if result.deployed_to:
            said.append(f"deployed to {result.deployed_to}")
        archived = getattr(result, "archived_as", None)
        if archived:
            said.append(f"nothing left to review: branch archived as {archived}")
            others = len(self.branches) - 1
            said.append(f"showing the next staged branch ({others} left)" if others else "")
        self.notify("; ".join(s for s in said if s) + ".", title="Adopted", timeout=8)
        self._forget_diff()
        self._load_branches()

    # undo the last adopt: a rollback of exactly that adoption commit

    def action_undo_adopt(self) -> None:
        result = self.last_adopt
        if result is None or self.busy or self.app.refuses_write("undo the adoption"):
            return
        hunks = ", ".join(f"#{i}" for i in result.hunks) or "its hunks"
        body = Text.assemble(
            "Roll back ",
            (result.commit[:7], "bold"),
            f" (hunks {hunks}): main gets a commit reverting exactly what it adopted",
            f"; {result.deployed_to} is rewritten" if result.deployed_to else "",
            ". Same as: ",
            (f"skillopt skills rollback {result.commit[:12]}", "dim"),
        )

        def answered(choice: str | None) -> None:
            if choice == "yes" and not self.busy:
                self.busy = True
                self._undo_adopt(result.commit)

        self.app.push_screen(ConfirmDialog("Undo the last adopt?", body), answered)

    @work(thread=True, group="git-write", exit_on_error=False)
    def _undo_adopt(self, sha: str, force: bool = False) -> None:
        try:
            commit = self.app.skills.repo().rollback(sha, force=force)
        except DeployTargetChanged as exc:
            self.post_message(
                DeployConflict("undo the adopt", exc, partial(self._undo_adopt, sha, True))
            )
            return
        except UserError as exc:
            self.post_message(ActionFailed("undo the adopt", str(exc)))
            return
        finally:
            self.busy = False
        self.post_message(RollbackFinished(commit, sha))

    def on_rollback_finished(self, message: RollbackFinished) -> None:
        self.last_adopt = None
        self.notify(
            f"Undid adoption {message.target[:7]}: rolled back as {message.commit[:7]}.",
            title="Undone",
        )
        self._forget_diff()
        self._load_branches()

    def action_reject_branch(self) -> None:
        if self.diff is None or self.busy or self.app.refuses_write("reject the branch"):
            return
        branch = self.diff.branch

        def answered(choice: str | None) -> None:
            if choice == "yes" and not self.busy:
                self.busy = True
                self._reject(branch)

        body = Text.assemble(
            "Archive ",
            (branch, "bold"),
            " under rejected/… (kept, not deleted). Nothing reaches main.",
        )
        self.app.push_screen(ConfirmDialog("Reject the whole branch?", body), answered)

    @work(thread=True, group="git-write", exit_on_error=False)
    def _reject(self, branch: str) -> None:
        try:
            archived = self.app.skills.repo().reject(branch)
        except UserError as exc:
            self.post_message(ActionFailed("reject", str(exc)))
            return
        finally:
            self.busy = False
        self.post_message(RejectFinished(archived))

    def on_reject_finished(self, message: RejectFinished) -> None:
        self.notify(f"Rejected; archived as {message.archived_as}", title="Rejected")
        self._forget_diff()
        self._load_branches()


def _only_conflicts(state: Any) -> str:
    """What the CLI would refuse with when every chosen hunk conflicts with main (the
    selection leaves them out, so it is empty), in this screen's words; "" otherwise."""
    chosen = sorted({i.hunk.index for i in state.items if i.conflicts and i.chosen_lines()})
    if not chosen:
        return ""
    return _tui_words(AdoptConflict("", chosen)) + "."


def _tui_words(exc: UserError) -> str:
    """Core errors name CLI flags; say the same with this screen's keys."""
    if isinstance(exc, AdoptConflict):
        names = ", ".join(f"#{i}" for i in exc.hunks)
        return (
            f"hunk {names} conflicts with changes made on main since the branch was staged: "
            "reject it (n) and adopt the others, or re-stage from the current main"
        )
    return str(exc)
