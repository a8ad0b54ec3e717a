"""Review: a staged branch's diff hunk by hunk, with its evidence; approve, reject, split,
choose lines, adopt.

Keys follow `git add -p` / lazygit. Decisions are kept per branch for the session (in
`app.review_states`) until `A` adopts them through `SkillsRepo.adopt(staged, hunks,
lines=)`: the same call `skillopt skills adopt --hunks … --lines …` makes, so the commit on
main is the same.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from core.errors import UserError
from skillopt_tui.app.messages import (
    ActionFailed,
    SkillsLoaded,
    StagedDiffLoaded,
)
from skillopt_tui.app.review_state import ReviewState
from skillopt_tui.app.screens.loading import LoadingScreen
from skillopt_tui.app.screens.repo_follow import FollowsRepo
from skillopt_tui.app.screens.review_edit import ReviewEdit
from skillopt_tui.app.screens.review_keys import (
    DIFF_ACTIONS,
    HELP,
    LINE_MODE_ACTIONS,
    LINE_MODE_ONLY,
    NOTHING_STAGED,
    REVIEW_KEYS,
)
from skillopt_tui.app.screens.review_writes import ReviewWrites
from skillopt_tui.app.widgets.evidence_panel import EvidencePanel
from skillopt_tui.app.widgets.fitting_footer import FittingFooter
from skillopt_tui.app.widgets.hunk_list import HunkList

NARROW_WIDTH = 80  # under this the side column is hidden behind `i` (app.tcss's -narrow)


class ReviewScreen(ReviewEdit, ReviewWrites, FollowsRepo, LoadingScreen):
    BINDINGS = REVIEW_KEYS

    def __init__(self, skill: str | None = None, *, branch: str | None = None) -> None:
        super().__init__()
        self.skill = skill
        self.branch = branch  # open on this staged branch (once; then the user's choice)
        self.branches: list[Any] = []
        self.branch_pos = 0
        self.diff: Any = None
        self.state: ReviewState | None = None
        self.deploy_to: str | None = None
        self.busy = False
        self.loading: str | None = None  # the branch whose diff is on its way
        self.note = ""  # one-off news for the status line (decisions dropped, …)
        self.last_adopt: Any = None  # the AdoptResult `U` would roll back

    # compatibility views of the state (tests and the evidence panel read these)
    @property
    def decisions(self) -> dict[int, str]:
        if self.state is None:
            return {}
        return {i.hunk.index: i.decision for i in self.state.items if not i.part}

    @property
    def current(self) -> int:
        return self.state.current if self.state else 0

    def compose(self) -> ComposeResult:
        with Horizontal(id="review"):
            with Vertical(id="review-side"):
                yield Label("Staged branches", classes="section-title")
                yield OptionList(id="branches")
                yield Label("Evidence", classes="section-title")
                yield EvidencePanel(id="evidence")
            with Vertical(id="review-main"):
                yield Label("", id="review-status")
                yield Input(placeholder="search hunks (enter: next match)", id="search")
                yield HunkList(id="hunks")
        # room for keys at 80 columns; A Adopt at any width (a phone's ~45)
        yield FittingFooter(compact=True, show_command_palette=False, keep=frozenset({"A"}))

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self.query_one(HunkList).focus()
        self._load_branches()
        self.follow_repo()

    def reread(self) -> None:
        """main or a branch moved (a rollback in History, a command in another terminal):
        the marks of what main holds are recomputed, the decisions kept."""
        self._load_branches()

    # One exclusive group per kind of read, as on History: a diff load must not cancel an
    # adopt preview.
    @work(thread=True, exclusive=True, group="review-branches", exit_on_error=False)
    def _load_branches(self) -> None:
        version = self.app.skills.version()
        self.post_message(SkillsLoaded(self.app.skills.overview(), version))

    async def on_skills_loaded(self, message: SkillsLoaded) -> None:
        overview = message.overview
        self.seen = message.version
        staged = list(overview.staged)
        if self.skill is not None and any(b.skill == self.skill for b in staged):
            staged.sort(key=lambda b: b.skill != self.skill)  # this skill's branches first
        previous = self.branches[self.branch_pos].name if self.branches else None
        if self.branch is not None:  # opened on this branch: once, then the user's choice
            previous, self.branch = self.branch, None
        self.branches = staged
        self._forget_diff()
        options = self.query_one("#branches", OptionList)
        options.clear_options()
        options.add_options(
            [
                Option(
                    Text(f"{b.run_id} · {b.skill}", no_wrap=True, overflow="ellipsis"), id=b.name
                )
                for b in staged
            ]
        )
        if not staged:
            await self.query_one(HunkList).set_items([], overview.problem or NOTHING_STAGED)
            self.query_one(EvidencePanel).clear(overview.problem or "Nothing to review.")
            self._status()
            self.mark_loaded()
            return
        names = [b.name for b in staged]
        if previous in names:
            self.branch_pos = names.index(previous)
        self.branch_pos = min(self.branch_pos, len(staged) - 1)
        options.highlighted = self.branch_pos
        self._show_branch(staged[self.branch_pos])

    @on(OptionList.OptionSelected, "#branches")
    def _branch_selected(self, event: OptionList.OptionSelected) -> None:
        self.branch_pos = event.option_index
        self._show_branch(self.branches[self.branch_pos])
        self._show_side(False)  # a branch chosen: its hunks (under 80 columns, in its place)

    def _forget_diff(self) -> None:
        """The shown diff no longer matches the selected branch: nothing may act on it
        (y/n/a/A/r are disabled) until the new one arrives. Its decisions stay in the
        session's store."""
        self.diff = None
        self.state = None
        self.loading = None
        self.refresh_bindings()

    def _show_branch(self, staged: Any) -> None:
        self._forget_diff()
        self.loading = staged.name
        self._load_diff(staged, self.app.review_states.part_keys(staged.name))

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        choosing = self.state is not None and self.state.line_cursor is not None
        if choosing:
            return action in LINE_MODE_ACTIONS
        if action in LINE_MODE_ONLY:
            return False
        if action == "undo_adopt":
            return self.last_adopt is not None
        if action == "evidence":
            return self.app.size.width < NARROW_WIDTH
        if action in DIFF_ACTIONS and self.diff is None:
            # nothing staged at all: hide what cannot act; a diff on its way: grey it out
            return False if not self.branches else None
        return True

    @work(thread=True, exclusive=True, group="review-diff", exit_on_error=False)
    def _load_diff(self, staged: Any, parts: list) -> None:
        try:
            repo = self.app.skills.repo()
            diff = repo.diff(staged.name)
            marks = repo.part_marks(staged.name, parts)
            deploy_to = self.app.skills.deploy_target(diff.skill)
        except UserError as exc:
            self.post_message(ActionFailed("load staged diff", str(exc)))
            return
        self.post_message(StagedDiffLoaded(diff, deploy_to, marks))

    async def on_staged_diff_loaded(self, message: StagedDiffLoaded) -> None:
        if message.diff.branch != self.loading:
            return  # a late answer for a branch no longer selected
        self.loading = None
        self.diff = message.diff
        self.deploy_to = message.deploy_to
        self.state, news = self.app.review_states.for_diff(self.diff, message.marks)
        if news:
            self.note = news
        hunk_list = self.query_one(HunkList)
        await hunk_list.set_items(self.state.items)
        self._redraw_current()
        if self.focused is None or self.focused.id != "branches":
            hunk_list.focus()  # j/k/↑/↓ and y/n act on the hunks (remounting them blurs)
        self.refresh_bindings()
        self.mark_loaded()

    # drawing

    def _status(self) -> None:
        label = self.query_one("#review-status", Label)
        state = self.state
        if state is None or not state.items:
            label.update("")
            return
        counts = state.counts()
        item = state.item
        undecided = counts["pending"]
        # one line, most important first (a narrow screen cuts the end, with …): where
        # the cursor is, the news, then the reminder
        line = Text.assemble(
            (f"hunk {state.current + 1}/{len(state.items)}", "bold"), f" · {undecided} undecided"
        )
        if state.line_cursor is not None and item is not None:
            line = Text.assemble(
                (f"lines of {item.label}", "bold yellow"),
                " · space choose · v range · esc done · j/k move",
            )
        if state.line_cursor is None and self.app.size.width < NARROW_WIDTH:
            line.append(" · i evidence")  # the side column is hidden: say where it went
        if self.note:
            line.append(f" · {self.note}", style="yellow")
        if state.line_cursor is None:
            line.append(" · decisions kept for this session")
        label.update(line)

    def _redraw_current(self) -> None:
        if self.state is None:
            return
        hunk_list = self.query_one(HunkList)
        state = self.state
        hunk_list.redraw(state.current, state.line_cursor, state.anchor)
        hunk_list.set_current(state.current)
        self._status()
        by_item = {n: item.decision for n, item in enumerate(state.items)}
        self.query_one(EvidencePanel).show(self.diff, self.deploy_to, by_item)
        self.refresh_bindings()  # line mode shows its own keys; U once something is adopted

    async def _redraw_all(self) -> None:
        if self.state is not None:
            await self.query_one(HunkList).set_items(self.state.items)
            self._redraw_current()

    # hunk navigation and decisions

    def action_move(self, delta: int) -> None:
        state = self.state
        if state is None or not state.items:
            return
        previous = state.current
        if state.line_cursor is not None:
            state.move_line(delta)
        else:
            state.move(delta)
        if previous != state.current:
            self.query_one(HunkList).redraw(previous)
        self._redraw_current()

    def action_undecided(self, delta: int) -> None:
        state = self.state
        if state is None:
            return
        previous = state.current
        if not state.next_undecided(delta):
            self.notify("No undecided hunk that way.", severity="information")
            return
        self.query_one(HunkList).redraw(previous)
        self._redraw_current()

    def action_decide(self, decision: str) -> None:
        state = self.state
        if state is None or state.item is None:
            return
        item = state.item
        state.leave_lines()
        if not state.decide(decision):
            self.notify(f"Hunk {item.label} is already on main.", severity="information")
        self.query_one(HunkList).redraw(state.current)
        self.action_move(1)

    async def action_approve_all(self) -> None:
        if self.state is None:
            return
        self.state.approve_all()
        skipped = [i.label for i in self.state.items if i.conflicts]
        if skipped:
            self.notify(
                f"Not approved: {', '.join(skipped)} conflicts with main (re-stage to adopt).",
                severity="warning",
            )
        await self._redraw_all()

    async def action_split(self) -> None:
        state = self.state
        if state is None or state.item is None:
            return
        if state.item.part:
            self.notify("Already split; choose lines with space.", severity="information")
            return
        pieces = state.split()
        if pieces == 1:
            self.notify(
                f"Hunk {state.item.label} is one change; choose lines with space.",
                severity="information",
            )
            return
        await self._redraw_all()

    def action_lines(self) -> None:
        state = self.state
        if state is None or state.item is None:
            return
        if not state.enter_lines():
            self.notify("Already on main.", severity="information")
        self._redraw_current()
        self.refresh_bindings()

    def action_line_choose(self) -> None:
        if self.state is not None:
            self.state.toggle()
            self._redraw_current()

    def action_range(self) -> None:
        state = self.state
        if state is None or not state.enter_lines():
            return
        state.toggle_range()
        self._redraw_current()
        self.refresh_bindings()

    def action_line_range(self) -> None:
        if self.state is not None:
            self.state.toggle_range()
            self._redraw_current()

    def action_lines_done(self) -> None:
        if self.state is not None:
            self.state.leave_lines()
            self._redraw_current()
            self.refresh_bindings()

    async def action_undo(self) -> None:
        if self.state is None or not self.state.undo():
            self.notify("Nothing to undo.", severity="information")
            return
        await self._redraw_all()

    def action_whole(self) -> None:
        if self.state is not None and self.state.items:
            view = self.query_one(HunkList).views[self.state.current]
            view.whole = not view.whole
            self._redraw_current()

    # search

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        state = self.state
        if state is None or not event.value.strip():
            return
        previous = state.current
        if state.find(event.value.strip()):
            self.query_one(HunkList).redraw(previous)
            self._redraw_current()
        else:
            self.notify(f"No hunk contains {event.value.strip()!r}.", severity="warning")

    def _close_search(self) -> bool:
        box = self.query_one("#search", Input)
        if not box.display:
            return False
        box.display = False
        self.query_one(HunkList).focus()
        return True

    def action_branch(self, delta: int) -> None:
        if not self.branches:
            return
        self.branch_pos = (self.branch_pos + delta) % len(self.branches)
        self.query_one("#branches", OptionList).highlighted = self.branch_pos
        self.note = ""
        self._show_branch(self.branches[self.branch_pos])

    def action_back(self) -> None:
        if self._close_search():
            return
        if self.state is not None and self.state.line_cursor is not None:
            self.action_lines_done()
            return
        self.app.pop_screen()

    def action_evidence(self) -> None:
        """Under 80 columns: the side column (branches, evidence) in place of the hunks, or
        back."""
        self._show_side(not self.query_one("#review-side").has_class("-shown"))

    def _show_side(self, shown: bool) -> None:
        self.query_one("#review-side").set_class(shown, "-shown")
        self.query_one("#review-main").set_class(shown, "-behind")
        if shown:
            self.query_one("#branches", OptionList).focus()
        else:
            self.query_one(HunkList).focus()

    def on_resize(self) -> None:
        self.refresh_bindings()  # `i` comes and goes with the width

    def action_help(self) -> None:
        self.app.show_help(HELP)
