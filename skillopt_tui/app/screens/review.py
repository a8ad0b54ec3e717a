"""Review: a staged branch's diff hunk by hunk, with its evidence; approve, reject, adopt.

Keys follow `git add -p` / lazygit. Decisions are only in memory until `A` adopts them
through `SkillsRepo.adopt(staged, hunks)`: the same call `skillopt skills adopt --hunks`
makes, so the commit on main is the same.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Label, OptionList
from textual.widgets.option_list import Option

from core.errors import UserError
from core.skills_repo.errors import DeployTargetChanged
from skillopt_tui.app.messages import (
    ActionFailed,
    AdoptFinished,
    DeployConflict,
    RejectFinished,
    SkillsLoaded,
    StagedDiffLoaded,
)
from skillopt_tui.app.widgets.confirm_dialog import ConfirmDialog
from skillopt_tui.app.widgets.deploy_conflict import ask_overwrite
from skillopt_tui.app.widgets.evidence_panel import EvidencePanel
from skillopt_tui.app.widgets.hunk_list import HunkList, hunk_text
from skillopt_tui.app.worker_errors import AppScreen

HELP = (
    "j/k move between hunks · y approve · n reject (both move on) · a approve all · "
    "A adopt the approved hunks (asks first) · r reject the whole branch (asks first) · "
    "[ ] previous/next staged branch"
)


DIFF_ACTIONS = {"decide", "approve_all", "adopt", "reject_branch"}  # need a shown diff


def on_main(hunk: Any) -> bool:
    return bool(getattr(hunk, "on_main", False))


def adopt_summary(diff: Any, hunks: list[int], deploy_to: str | None) -> Text:
    """Exactly what `A` will do, for the confirmation dialog."""
    chosen = [h for h in diff.hunks if h.index in hunks]
    files = sorted({h.file for h in chosen})
    done = sum(1 for h in diff.hunks if on_main(h))
    already = f"; {done} already on main" if done else ""
    lines = [
        Text.assemble(
            "Commit on ",
            ("main", "bold"),
            f": {len(chosen)} of {len(diff.hunks)} hunks from ",
            (diff.branch, "bold"),
            f" (skill {diff.skill}{already})",
        ),
        Text.assemble("Files: ", ", ".join(files)),
        Text.assemble("Deploy to: ", (deploy_to or "nothing (no deploy target)", "bold")),
        Text(""),
    ]
    lines += [hunk_text(h, "approved", show_file=len(files) > 1) for h in chosen]
    return Text("\n").join(lines)


class ReviewScreen(AppScreen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        # not priority: with the branch list focused its own ↑/↓ move in the list
        Binding(
            "j,down",
            "move(1)",
            "Move",
            key_display="j/k",
            tooltip="Next hunk (also ↓ while the hunks have focus)",
        ),
        Binding(
            "k,up",
            "move(-1)",
            "Previous hunk",
            show=False,
            key_display="k",
            tooltip="Previous hunk (also ↑ while the hunks have focus)",
        ),
        Binding(
            "y",
            "decide('approved')",
            "Approve",
            tooltip="Approve the current hunk and move to the next",
        ),
        Binding(
            "n",
            "decide('rejected')",
            "Reject",
            tooltip="Reject the current hunk and move to the next",
        ),
        Binding("a", "approve_all", "All", tooltip="Approve every hunk not already on main"),
        Binding(
            "A",
            "adopt",
            "Adopt",
            tooltip="Commit the approved hunks on main and deploy (asks first)",
        ),
        Binding(
            "r",
            "reject_branch",
            "Reject branch",
            tooltip="Archive the whole staged branch under rejected/ (asks first)",
        ),
        Binding(
            "right_square_bracket",
            "branch(1)",
            "Next branch",
            show=False,
            tooltip="Show the next staged branch",
        ),
        Binding(
            "left_square_bracket",
            "branch(-1)",
            "Prev branch",
            show=False,
            tooltip="Show the previous staged branch",
        ),
        Binding("question_mark", "help", "Help"),
    ]

    def __init__(self, skill: str | None = None) -> None:
        super().__init__()
        self.skill = skill
        self.branches: list[Any] = []
        self.branch_pos = 0
        self.diff: Any = None
        self.deploy_to: str | None = None
        self.decisions: dict[int, str] = {}
        self.current = 0
        self.busy = False
        self.loading: str | None = None  # the branch whose diff is on its way
        self.loaded = 0  # diffs shown; tests wait on it

    def compose(self) -> ComposeResult:
        with Horizontal(id="review"):
            with Vertical(id="review-side"):
                yield Label("Staged branches", classes="section-title")
                yield OptionList(id="branches")
                yield Label("Evidence", classes="section-title")
                yield EvidencePanel(id="evidence")
            yield HunkList(id="hunks")
        yield Footer(compact=True, show_command_palette=False)  # room for keys at 80 cols

    def on_mount(self) -> None:
        self.query_one(HunkList).focus()
        self._load_branches()

    @work(thread=True, exclusive=True, group="git", exit_on_error=False)
    def _load_branches(self) -> None:
        self.post_message(SkillsLoaded(self.app.skills.overview()))

    async def on_skills_loaded(self, message: SkillsLoaded) -> None:
        overview = message.overview
        staged = list(overview.staged)
        if self.skill is not None and any(b.skill == self.skill for b in staged):
            staged.sort(key=lambda b: b.skill != self.skill)  # this skill's branches first
        self.branches = staged
        self._forget_diff()
        options = self.query_one("#branches", OptionList)
        options.clear_options()
        options.add_options([Option(f"{b.run_id} · {b.skill}", id=b.name) for b in staged])
        if not staged:
            await self.query_one(HunkList).set_hunks(
                [], overview.problem or "Nothing staged: no branch awaits review."
            )
            self.query_one(EvidencePanel).clear(overview.problem or "Nothing to review.")
            self.loaded += 1
            return
        self.branch_pos = min(self.branch_pos, len(staged) - 1)
        options.highlighted = self.branch_pos
        self._show_branch(staged[self.branch_pos])

    @on(OptionList.OptionSelected, "#branches")
    def _branch_selected(self, event: OptionList.OptionSelected) -> None:
        self.branch_pos = event.option_index
        self._show_branch(self.branches[self.branch_pos])
        self.query_one(HunkList).focus()

    def _forget_diff(self) -> None:
        """The shown diff no longer matches the selected branch: nothing may act on it
        (y/n/a/A/r are disabled) until the new one arrives."""
        self.diff = None
        self.decisions = {}
        self.loading = None
        self.refresh_bindings()

    def _show_branch(self, staged: Any) -> None:
        self._forget_diff()
        self.loading = staged.name
        self._load_diff(staged)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in DIFF_ACTIONS and self.diff is None:
            return None  # shown, greyed out
        return True

    @work(thread=True, exclusive=True, group="git", exit_on_error=False)
    def _load_diff(self, staged: Any) -> None:
        try:
            repo = self.app.skills.repo()
            diff = repo.diff(staged.name)
            deploy_to = self.app.skills.deploy_target(diff.skill)
        except UserError as exc:
            self.post_message(ActionFailed("load staged diff", str(exc)))
            return
        self.post_message(StagedDiffLoaded(diff, deploy_to))

    async def on_staged_diff_loaded(self, message: StagedDiffLoaded) -> None:
        if message.diff.branch != self.loading:
            return  # a late answer for a branch no longer selected
        self.loading = None
        self.diff = message.diff
        self.deploy_to = message.deploy_to
        self.decisions = {h.index: "adopted" if on_main(h) else "pending" for h in self.diff.hunks}
        self.current = 0
        hunk_list = self.query_one(HunkList)
        await hunk_list.set_hunks(list(self.diff.hunks))
        for pos, hunk in enumerate(self.diff.hunks):
            if on_main(hunk):
                hunk_list.show_decision(pos, "adopted")
        hunk_list.set_current(0)
        if self.focused is None or self.focused.id != "branches":
            hunk_list.focus()  # j/k/↑/↓ and y/n act on the hunks (remounting them blurs)
        self._show_evidence()
        self.refresh_bindings()
        self.loaded += 1

    def _show_evidence(self) -> None:
        if self.diff is not None:
            self.query_one(EvidencePanel).show(self.diff, self.deploy_to, self.decisions)

    # hunk navigation and decisions

    def action_move(self, delta: int) -> None:
        if self.diff is None or not self.diff.hunks:
            return
        self.current = max(0, min(len(self.diff.hunks) - 1, self.current + delta))
        self.query_one(HunkList).set_current(self.current)

    def action_decide(self, decision: str) -> None:
        if self.diff is None or not self.diff.hunks:
            return
        hunk = self.diff.hunks[self.current]
        if on_main(hunk):
            self.notify(f"Hunk #{hunk.index} is already on main.", severity="information")
            self.action_move(1)
            return
        self.decisions[hunk.index] = decision
        self.query_one(HunkList).show_decision(self.current, decision)
        self._show_evidence()
        self.action_move(1)

    def action_approve_all(self) -> None:
        if self.diff is None:
            return
        hunks = self.query_one(HunkList)
        for pos, hunk in enumerate(self.diff.hunks):
            if not on_main(hunk):
                self.decisions[hunk.index] = "approved"
                hunks.show_decision(pos, "approved")
        self._show_evidence()

    def approved(self) -> list[int]:
        return sorted(i for i, d in self.decisions.items() if d == "approved")

    def action_adopt(self) -> None:
        if self.diff is None or self.busy:
            return
        hunks = self.approved()
        if not hunks:
            self.notify(
                "No hunk approved yet: press y on a hunk, or a for all.", severity="warning"
            )
            return
        # What the dialog shows is what gets adopted: this diff (branch and head) and these
        # hunk numbers, whatever the screen shows by the time the answer comes.
        diff = self.diff
        every = set(hunks) == {h.index for h in diff.hunks}
        chosen = None if every else hunks

        def answered(choice: str | None) -> None:
            if choice == "yes" and not self.busy:
                self.busy = True  # one write at a time; cleared when the worker ends
                self._adopt(diff, chosen)

        self.app.push_screen(
            ConfirmDialog("Adopt these hunks?", adopt_summary(diff, hunks, self.deploy_to)),
            answered,
        )

    @work(thread=True, group="git-write", exit_on_error=False)
    def _adopt(self, diff: Any, hunks: list[int] | None, force: bool = False) -> None:
        try:
            repo = self.app.skills.repo()
            if repo.diff(diff.branch).head != diff.head:
                self.post_message(
                    ActionFailed(
                        "adopt",
                        f"{diff.branch} changed since it was "
                        "shown; reopen Review (esc, v) to see it again",
                    )
                )
                return
            result = repo.adopt(diff.branch, hunks, force=force)
        except DeployTargetChanged as exc:
            self.post_message(DeployConflict("adopt", exc, partial(self._readopt, diff, hunks)))
            return
        except UserError as exc:
            self.post_message(ActionFailed("adopt", str(exc)))
            return
        finally:
            self.busy = False
        self.post_message(AdoptFinished(result, hunks))

    def _readopt(self, diff: Any, hunks: list[int] | None) -> None:
        if not self.busy:
            self.busy = True
            self._adopt(diff, hunks, force=True)

    def on_deploy_conflict(self, message: DeployConflict) -> None:
        ask_overwrite(self, message)

    def on_adopt_finished(self, message: AdoptFinished) -> None:
        result = message.result
        where = f"; deployed to {result.deployed_to}" if result.deployed_to else ""
        self.notify(f"Adopted as {result.commit[:7]} on main{where}", title="Adopted")
        self._forget_diff()
        self._load_branches()

    def action_reject_branch(self) -> None:
        if self.diff is None or self.busy:
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

    def action_branch(self, delta: int) -> None:
        if not self.branches:
            return
        self.branch_pos = (self.branch_pos + delta) % len(self.branches)
        self.query_one("#branches", OptionList).highlighted = self.branch_pos
        self._show_branch(self.branches[self.branch_pos])

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_help(self) -> None:
        self.app.show_help(HELP)
